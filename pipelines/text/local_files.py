"""Parallel text from local files as a `tf.data.Dataset`: two line-aligned
files or one TSV file.

The files are checked first, in one streaming pass, by the readers of
`pipelines.text.parallel_corpus` (the checks `prepare` runs): a missing or empty
file, a line-count mismatch between two files (both counts named), invalid
UTF-8 or a TSV line without exactly one tab (file and line named) raise.
Nothing is dropped here: pairs with an empty side are kept and later filtered
*and counted* by `pipelines.count_filtered`. Plain and `.gz` files are then
read by `TextLineDataset` (fast and graph-only), `.xz` files through Python.
"""

import os

import tensorflow as tf

from pipelines.text.parallel_corpus import (
    CorpusPart,
    ParallelCorpus,
    decode_pairs,
    scan_file,
)

PathLike = str | os.PathLike


def _checked(part: CorpusPart) -> ParallelCorpus:
    corpus = ParallelCorpus([part])
    corpus.scan()
    for _ in decode_pairs(corpus.raw_pairs(), corpus.origin, "fail", keep_empty=True):
        pass
    return corpus


def _dataset(corpus: ParallelCorpus) -> tf.data.Dataset | None:
    """The pairs of a checked corpus; `None` if `TextLineDataset` reads them."""
    if not any(str(path).endswith(".xz") for path in corpus.parts[0].paths):
        return None

    def generate():
        pairs = decode_pairs(corpus.raw_pairs(), corpus.origin, keep_empty=True)
        for _, source, target in pairs:
            yield source, target

    spec = tf.TensorSpec([], tf.string)
    return tf.data.Dataset.from_generator(generate, output_signature=(spec, spec))


def _lines(path: PathLike) -> tf.data.Dataset:
    compression = "GZIP" if str(path).endswith(".gz") else ""
    lines = tf.data.TextLineDataset(str(path), compression_type=compression)
    # Python strips "\r\n" in the check; do the same in the graph.
    return lines.map(lambda line: tf.strings.regex_replace(line, "\r$", ""))


def count_lines(path: PathLike) -> int:
    """Returns the number of lines of `path` (a last line without a newline
    counts); raises on a missing or empty file.

    Args:
        path: str or path-like. A plain, `.gz` or `.xz` file.

    Returns:
        int.

    Raises:
        FileNotFoundError: the file is missing.
        ValueError: the file has no lines.
    """
    return scan_file(path).lines


def read_parallel_files(
    source_path: PathLike, target_path: PathLike
) -> tf.data.Dataset:
    """Reads two line-aligned files as a dataset of `(source, target)` strings.

    Args:
        source_path: path. One source sentence per line (`.gz`, `.xz` allowed).
        target_path: path. The target sentence of the same line number.

    Returns:
        A `tf.data.Dataset` of `(source, target)` scalar `tf.string` pairs, in
        file order.

    Raises:
        ValueError: a file is empty, holds invalid UTF-8 (the file and line are
            named), or the two files differ in line count.
    """
    corpus = _checked(CorpusPart(os.fspath(source_path), os.fspath(target_path)))
    dataset = _dataset(corpus)
    if dataset is not None:
        return dataset
    return tf.data.Dataset.zip(_lines(source_path), _lines(target_path))


def read_parallel_tsv(path: PathLike, reverse: bool = False) -> tf.data.Dataset:
    """Reads a `left<TAB>right` file as a dataset of `(source, target)` strings.

    Args:
        path: path. One pair per line, exactly one tab per line (`.gz`, `.xz`
            allowed).
        reverse: bool. If `True` the right column is the source. The bundled
            corpora are `english<TAB>foreign`, so `False` translates from
            English. Defaults to `False`.

    Returns:
        A `tf.data.Dataset` of `(source, target)` scalar `tf.string` pairs.

    Raises:
        ValueError: the file is empty, holds invalid UTF-8, or a line does not
            have exactly two tab-separated fields (the file and line are named).
    """
    corpus = _checked(CorpusPart(os.fspath(path), reverse=reverse))
    dataset = _dataset(corpus)
    if dataset is not None:
        return dataset

    def split(line):
        fields = tf.strings.split(line, "\t", maxsplit=1)
        if reverse:
            return fields[1], fields[0]
        return fields[0], fields[1]

    return _lines(path).map(split, num_parallel_calls=tf.data.AUTOTUNE)
