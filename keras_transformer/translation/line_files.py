"""The input and output files of a streaming `translate` or `parse`: lines
read one at a time (plain, `.gz` or `.xz`, or stdin) and checked as UTF-8,
and an output path checked before anything is written."""

import codecs
import os
import sys

from keras_transformer.runs.user_error import MissingFileError, UserError


def read_lines(path, errors="strict"):
    """Yields the lines of a UTF-8 file, or of stdin, without line ends.

    The file is read one line at a time, never whole; a `.gz` or `.xz` file
    is decompressed as it is read. A UTF-8 byte order mark at the start is
    dropped.

    Args:
        path: str. The file; `"-"` for stdin.
        errors: `"strict"` (invalid UTF-8 is refused) or `"replace"` (each
            invalid byte read as U+FFFD, as the exported parser reads its
            requests). Defaults to `"strict"`.

    Yields:
        str, one line without its `"\\n"` or `"\\r\\n"`.

    Raises:
        UserError: the file is missing or unreadable, or a line is not UTF-8
            (`"Invalid UTF-8 in FILE at line N"`).
    """
    if path == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:  # a text stream (an embedding program, a test)
            for line in sys.stdin:
                yield line.rstrip("\r\n")
        else:
            yield from _decoded_lines(stream, "<stdin>", errors)
        return
    from pipelines import open_binary

    try:
        stream = open_binary(path)
    except FileNotFoundError:
        raise MissingFileError(f"No such input file: {path}") from None
    except OSError as error:
        raise UserError(f"Cannot read {path}: {error.strerror or error}") from None
    with stream:
        yield from _decoded_lines(stream, path, errors)


def _decoded_lines(stream, name, errors="strict"):
    """The lines of a binary stream as str, decoded from UTF-8 with
    `errors`."""
    try:
        for number, raw in enumerate(stream, 1):
            if number == 1:
                raw = raw.removeprefix(codecs.BOM_UTF8)
            try:
                line = raw.decode("utf-8", errors)
            except UnicodeDecodeError:
                raise UserError(f"Invalid UTF-8 in {name} at line {number}") from None
            yield line.rstrip("\r\n")
    except (OSError, EOFError) as error:  # e.g. a bad or truncated .gz file
        raise UserError(f"Cannot read {name}: {error}") from None


def count_lines(path, errors="strict"):
    """The number of lines of an input file, each checked to be UTF-8 (one
    pass, one line in memory at a time), so that a bad input is refused before
    the model loads.

    Args:
        path: str. The file; `"-"` for stdin, which is not counted.
        errors: as `read_lines`.

    Returns:
        int, or `None` for stdin.

    Raises:
        UserError: as `read_lines`.
    """
    if path == "-":
        return None
    return sum(1 for _ in read_lines(path, errors))


def check_output_path(path, input_path="-"):
    """Refuses an output file that cannot be written or is the input file,
    without creating it (the model loads first).

    Args:
        path: str. The output file; `"-"` for stdout.
        input_path: str. The input file; `"-"` for stdin.

    Raises:
        UserError: the output is a folder, its folder is missing, or it is
            the input.
    """
    if path == "-":
        return
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UserError(f"--output {path} is a folder.")
    if not os.path.isdir(folder):
        raise UserError(f"No such folder for --output: {folder}")
    if input_path != "-" and os.path.exists(path):
        if os.path.samefile(path, input_path):
            raise UserError(f"--output {path} is the input file.")
