"""Parallel text from local files: two line-aligned files or one TSV file.

Files are checked in one streaming pass before a `tf.data` pipeline reads them
(`TextLineDataset`, fast and graph-only). The check raises, naming the file and
the line, on: an empty file, undecodable UTF-8, a line-count mismatch between
two files, a TSV line without exactly one tab. Nothing is dropped here: pairs
with an empty side are kept and later filtered *and counted* by
`pipelines.count_filtered`. Files ending in `.gz` are read as gzip.
"""

import gzip
import os
from collections.abc import Iterator

import tensorflow as tf

PathLike = str | os.PathLike


def _open_binary(path: PathLike):
    if str(path).endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


def _compression(path: PathLike) -> str:
    return "GZIP" if str(path).endswith(".gz") else ""


def _check_lines(path: PathLike) -> Iterator[str]:
    """Yields the decoded lines of `path`, raising on bad UTF-8 or no lines."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No such parallel text file. Received: path={path}")
    count = 0
    with _open_binary(path) as handle:
        for count, raw in enumerate(handle, start=1):  # noqa: B007
            raw = raw.rstrip(b"\n").rstrip(b"\r")
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ValueError(
                    f"Invalid UTF-8 in {path} at line {count} (byte "
                    f"{error.start}): {error.reason}. Received: {raw[:60]!r}"
                ) from None
    if count == 0:
        raise ValueError(f"Parallel text file is empty. Received: path={path}")


def _strip_cr(line: tf.Tensor) -> tf.Tensor:
    # Python strips "\r\n" in the check; do the same in the graph.
    return tf.strings.regex_replace(line, "\r$", "")


def count_lines(path: PathLike) -> int:
    """Returns the number of lines of `path`, after checking it as above."""
    return sum(1 for _ in _check_lines(path))


def read_parallel_files(
    source_path: PathLike, target_path: PathLike
) -> tf.data.Dataset:
    """Reads two line-aligned files as a dataset of `(source, target)` strings.

    Args:
        source_path: path. One source sentence per line (`.gz` allowed).
        target_path: path. The target sentence of the same line number.

    Returns:
        A `tf.data.Dataset` of `(source, target)` scalar `tf.string` pairs, in
        file order.

    Raises:
        ValueError: a file is empty, holds invalid UTF-8 (the file and line are
            named), or the two files differ in line count.
    """
    source_lines = _check_lines(source_path)
    target_lines = _check_lines(target_path)
    line = 0
    for line, (source, target) in enumerate(  # noqa: B007
        _zip_longest(source_lines, target_lines), start=1
    ):
        if source is None or target is None:
            shorter = source_path if source is None else target_path
            raise ValueError(
                f"Line-count mismatch: {shorter} ends before line {line}, the "
                f"other file goes on. Received: source_path={source_path}, "
                f"target_path={target_path}"
            )
    sources = tf.data.TextLineDataset(
        str(source_path), compression_type=_compression(source_path)
    )
    targets = tf.data.TextLineDataset(
        str(target_path), compression_type=_compression(target_path)
    )
    pairs = tf.data.Dataset.zip(sources, targets)
    return pairs.map(lambda s, t: (_strip_cr(s), _strip_cr(t)))


def _zip_longest(first: Iterator[str], second: Iterator[str]):
    sentinel = object()
    while True:
        a = next(first, sentinel)
        b = next(second, sentinel)
        if a is sentinel and b is sentinel:
            return
        yield (None if a is sentinel else a), (None if b is sentinel else b)


def read_parallel_tsv(path: PathLike, reverse: bool = False) -> tf.data.Dataset:
    """Reads a `left<TAB>right` file as a dataset of `(source, target)` strings.

    Args:
        path: path. One pair per line, exactly one tab per line (`.gz` allowed).
        reverse: bool. If `True` the right column is the source. The bundled
            corpora are `english<TAB>foreign`, so `False` translates from
            English. Defaults to `False`.

    Returns:
        A `tf.data.Dataset` of `(source, target)` scalar `tf.string` pairs.

    Raises:
        ValueError: the file is empty, holds invalid UTF-8, or a line does not
            have exactly two tab-separated fields (the file and line are named).
    """
    for number, line in enumerate(_check_lines(path), start=1):
        fields = line.count("\t") + 1
        if fields != 2:
            raise ValueError(
                f"Expected 2 tab-separated fields in {path} at line {number}. "
                f"Received: {fields} fields in {line[:60]!r}"
            )
    lines = tf.data.TextLineDataset(str(path), compression_type=_compression(path))

    def split(line):
        fields = tf.strings.split(_strip_cr(line), "\t", maxsplit=1)
        if reverse:
            return fields[1], fields[0]
        return fields[0], fields[1]

    return lines.map(split, num_parallel_calls=tf.data.AUTOTUNE)
