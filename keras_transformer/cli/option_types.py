"""argparse `type=` functions of the command line: each converts and checks
one option where it is parsed, so a bad value is refused naming it, before
anything is loaded."""

import argparse
import os
import re

from keras_transformer.validation import (
    check_non_negative_float,
    check_non_negative_int,
    check_positive_float,
    check_positive_int,
)


def _option(convert, check, expected):
    """An argparse `type=` that converts, then range-checks, so that a bad
    value is refused when the options are parsed, naming it."""

    def parse(text):
        try:
            value = convert(text)
            check("value", value)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected {expected}. Received: {text!r}"
            ) from None
        return value

    return parse


POSITIVE_INT = _option(int, check_positive_int, "a positive integer")
NON_NEGATIVE_INT = _option(int, check_non_negative_int, "a non-negative integer")
POSITIVE_FLOAT = _option(float, check_positive_float, "a positive number")
NON_NEGATIVE_FLOAT = _option(float, check_non_negative_float, "a finite number >= 0")


def tf_text_version(value):
    """`--tf-text-version`: a release such as 2.20, or `none` (no op check)."""
    if value.strip().lower() == "none":
        return "none"
    if not re.fullmatch(r"\d+\.\d+(\.\d+)?", value.strip()):
        raise argparse.ArgumentTypeError(
            f"expected a release such as 2.20, or none. Received: {value!r}"
        )
    return value.strip()


def input_file(text):
    """`--input`: a file to read, or `-` for stdin; a folder is refused here
    (a missing file is refused, naming it, when it is opened)."""
    if text != "-" and os.path.isdir(text):
        raise argparse.ArgumentTypeError(
            f"expected a file (or - for stdin), not a folder. Received: {text!r}"
        )
    return text


def output_file(text):
    """`--output`, `--png`: a file to write, or `-`; a folder is refused."""
    if text != "-" and os.path.isdir(text):
        raise argparse.ArgumentTypeError(
            f"expected a file to write, not a folder. Received: {text!r}"
        )
    return text


def run_directory(text):
    """`--run-dir`: a folder, existing or to be made; a file is refused."""
    if os.path.exists(text) and not os.path.isdir(text):
        raise argparse.ArgumentTypeError(
            f"expected a run directory, not a file. Received: {text!r}"
        )
    return text


def export_directory(text):
    """`--export`: an exported SavedModel version folder (`<base>/<version>`);
    a file is refused here (a missing folder is refused, naming it, when the
    SavedModel is loaded)."""
    if os.path.exists(text) and not os.path.isdir(text):
        raise argparse.ArgumentTypeError(
            "expected an exported SavedModel version folder "
            f"(export/<version>), not a file. Received: {text!r}"
        )
    return text


def weights_file(text):
    """`--weights`: a `.weights.h5` file (checked for content when read)."""
    if not text.endswith(".weights.h5") or os.path.isdir(text):
        raise argparse.ArgumentTypeError(
            f"expected a .weights.h5 file. Received: {text!r}"
        )
    return text
