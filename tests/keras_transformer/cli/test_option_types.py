import argparse

import pytest

from keras_transformer import cli
from keras_transformer.cli.option_types import (
    NON_NEGATIVE_FLOAT,
    NON_NEGATIVE_INT,
    POSITIVE_FLOAT,
    POSITIVE_INT,
    tf_text_version,
)


def test_values_in_range_are_converted():
    assert POSITIVE_INT("4") == 4
    assert NON_NEGATIVE_INT("0") == 0
    assert POSITIVE_FLOAT("0.5") == 0.5
    assert NON_NEGATIVE_FLOAT("0") == 0.0
    assert tf_text_version(" 2.18 ") == "2.18"
    assert tf_text_version("None") == "none"


@pytest.mark.parametrize(
    "parse, text",
    [
        (POSITIVE_INT, "0"),
        (POSITIVE_INT, "-3"),
        (POSITIVE_INT, "2.5"),
        (NON_NEGATIVE_INT, "-1"),
        (POSITIVE_FLOAT, "0"),
        (POSITIVE_FLOAT, "inf"),
        (NON_NEGATIVE_FLOAT, "nan"),
        (NON_NEGATIVE_FLOAT, "-0.1"),
        (tf_text_version, "2.x"),
    ],
)
def test_out_of_range_values_name_what_was_received(parse, text):
    with pytest.raises(argparse.ArgumentTypeError, match=f"Received: {text!r}"):
        parse(text)


@pytest.mark.parametrize(
    "argv, named",
    [
        (["--alpha", "nan"], "--alpha"),
        (["--alpha", "-1"], "--alpha"),
        (["--beam-size", "0"], "--beam-size"),
        (["--n-best", "0"], "--n-best"),
        (["--max-extra-length", "-5"], "--max-extra-length"),
        (["--batch-size", "0"], "--batch-size"),
    ],
)
def test_translate_refuses_bad_decoding_options_before_loading(argv, named, capsys):
    # The run directory does not exist: the option is refused before it is read.
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["translate", "--run-dir", "missing-run"] + argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {named}: expected" in err and "Traceback" not in err
