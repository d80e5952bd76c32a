"""Parallel corpora streamed from files: the user's own data, any size.

A `ParallelCorpus` is a list of `CorpusPart`s read one after the other (so
several training files concatenate): each part is two line-aligned files
(source, target; Moses style, as OPUS ships them) or one TSV file
(`source<TAB>target`), plain, `.gz` or `.xz`. Nothing is held in memory: the
files are read line by line, as bytes.

Three passes over the files, each streaming:

1. `ParallelCorpus.scan` counts lines and fingerprints (SHA-256) every file
   and fails on a line-count mismatch between the two files of a part, naming
   both files and counts, before any other work.
2. `decode_pairs` decodes and checks each pair: invalid UTF-8, a TSV line
   without exactly one tab, an empty side. `on_bad_line="fail"` raises on the
   first, naming the file and line; `"skip"` drops it and counts it by reason
   (`pipelines.FILTER_REASONS`).
3. The token-level checks (too long, length ratio) follow tokenization
   (`pipelines.text.token_cache`).

Every pair carries a `line_id` (part index and line number), from which
`ParallelCorpus.origin` names the file and line of an error.

`DatasetCorpus` gives a `tf.data.Dataset` of string pairs (a TFDS split) the
same interface, so that every data source goes through one preparation path.
"""

import dataclasses
import gzip
import hashlib
import itertools
import lzma
import os
from collections import Counter
from collections.abc import Iterable, Iterator

import tensorflow as tf

from pipelines.text.filter_report import REASON_MESSAGES

PathLike = str | os.PathLike
ON_BAD_LINE = ("skip", "fail")
# The line number takes the low bits of a line id, the part index the rest.
_LINE_BITS = 40
_CHUNK_BYTES = 1 << 20


def open_binary(path: PathLike):
    """Opens a plain, `.gz` or `.xz` file for reading bytes.

    Args:
        path: str or path-like. The file; `.gz` and `.xz` are decompressed.

    Returns:
        A binary file object, to be closed by the caller (a context manager).
    """
    name = str(path)
    if name.endswith(".gz"):
        return gzip.open(path, "rb")
    if name.endswith(".xz"):
        return lzma.open(path, "rb")
    return open(path, "rb")


@dataclasses.dataclass(frozen=True)
class FileSummary:
    """What `scan_file` found: the record of one file in a run directory."""

    path: str
    lines: int
    bytes: int  # on disk (compressed size for .gz/.xz)
    sha256: str  # of the bytes on disk
    mtime_ns: int

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def scan_file(path: PathLike) -> FileSummary:
    """Counts the lines of `path` and fingerprints it, in one streaming pass.

    A last line without a newline counts as a line.

    Args:
        path: str or path-like. A plain, `.gz` or `.xz` file.

    Returns:
        A `FileSummary`: the path, its lines, its size and SHA-256 on disk and
        its modification time.

    Raises:
        FileNotFoundError: naming the path.
        ValueError: the file has no lines.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No such parallel text file. Received: path={path}")
    digest = hashlib.sha256()
    with open(path, "rb") as raw:
        for chunk in iter(lambda: raw.read(_CHUNK_BYTES), b""):
            digest.update(chunk)
    lines, last = 0, b"\n"
    with open_binary(path) as handle:
        for chunk in iter(lambda: handle.read(_CHUNK_BYTES), b""):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    lines += last != b"\n"
    if lines == 0:
        raise ValueError(f"Parallel text file is empty. Received: path={path}")
    stat = os.stat(path)
    return FileSummary(path, lines, stat.st_size, digest.hexdigest(), stat.st_mtime_ns)


def file_unchanged(summary: dict) -> bool:
    """Whether the file of a recorded `FileSummary` dict still has its
    content: same size and modification time, or else the same SHA-256.

    Args:
        summary: dict. A `FileSummary.to_dict()` record.

    Returns:
        bool. `False` also when the file is gone.
    """
    path = summary["path"]
    if not os.path.isfile(path):
        return False
    stat = os.stat(path)
    if stat.st_size != summary["bytes"]:
        return False
    if stat.st_mtime_ns == summary["mtime_ns"]:
        return True
    return scan_file(path).sha256 == summary["sha256"]


@dataclasses.dataclass(frozen=True)
class CorpusPart:
    """Two line-aligned files, or one TSV file (`target=None`).

    `reverse=True` makes a TSV file's right column the source.
    """

    source: str
    target: str | None = None
    reverse: bool = False

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.source,) if self.target is None else (self.source, self.target)

    @classmethod
    def from_paths(cls, paths, reverse=False) -> "CorpusPart":
        """From `[tsv]` or `[source, target]` (a command-line argument)."""
        paths = [os.fspath(p) for p in paths]
        if len(paths) not in (1, 2):
            raise ValueError(
                "A corpus part is one TSV file or two line-aligned files "
                f"(source, target). Received: paths={paths}"
            )
        return cls(*paths, reverse=reverse)


class ParallelCorpus:
    """Parallel text in files, read as a stream of raw line pairs.

    Args:
        parts: iterable of `CorpusPart`, read in order.
    """

    def __init__(self, parts: Iterable[CorpusPart]):
        self.parts = tuple(parts)
        if not self.parts:
            raise ValueError("A parallel corpus needs at least one part.")

    def scan(self) -> list[list[FileSummary]]:
        """Line counts and fingerprints of every file: one list per part, in
        order.

        Raises:
            ValueError: the two files of a part differ in line count (both
                files and counts are named), or a file is empty.
        """
        summaries = []
        for part in self.parts:
            found = [scan_file(path) for path in part.paths]
            if len(found) == 2 and found[0].lines != found[1].lines:
                raise ValueError(
                    f"Line-count mismatch: {found[0].path} has {found[0].lines} "
                    f"lines, {found[1].path} has {found[1].lines}"
                )
            summaries.append(found)
        return summaries

    def raw_pairs(self) -> Iterator[tuple[int, bytes, bytes | None]]:
        """Yields `(line_id, source, target)` bytes, without line endings; a
        TSV line without exactly one tab gives `target=None`."""
        for index, part in enumerate(self.parts):
            base = index << _LINE_BITS
            if part.target is None:
                with open_binary(part.source) as handle:
                    for number, line in enumerate(handle, start=1):
                        line = _strip_newline(line)
                        fields = line.split(b"\t")
                        if len(fields) != 2:
                            yield base + number, line, None
                        elif part.reverse:
                            yield base + number, fields[1], fields[0]
                        else:
                            yield base + number, fields[0], fields[1]
                continue
            with (
                open_binary(part.source) as sources,
                open_binary(part.target) as targets,
            ):
                for number, (source, target) in enumerate(
                    zip(sources, targets, strict=False), start=1
                ):
                    yield base + number, _strip_newline(source), _strip_newline(target)

    def origin(self, line_id: int) -> str:
        """The file(s) and line of `line_id`, for messages."""
        part = self.parts[line_id >> _LINE_BITS]
        line = line_id & ((1 << _LINE_BITS) - 1)
        return f"{' and '.join(part.paths)} at line {line}"


class DatasetCorpus:
    """A `tf.data.Dataset` of `(source, target)` strings (e.g. a TFDS split)
    with `ParallelCorpus`'s streaming interface.

    Args:
        dataset: `tf.data.Dataset` of scalar string pairs.
        name: str. Named in messages, e.g. `"wmt14_translate/de-en train"`.
    """

    def __init__(self, dataset: tf.data.Dataset, name: str):
        self.dataset = dataset
        self.name = name

    def scan(self) -> list[list[FileSummary]]:
        return []

    def raw_pairs(self) -> Iterator[tuple[int, bytes, bytes]]:
        number = 0
        for sources, targets in self.dataset.batch(4096).as_numpy_iterator():
            for source, target in zip(sources, targets, strict=True):
                number += 1
                yield number, source, target

    def origin(self, line_id: int) -> str:
        return f"{self.name} at example {line_id}"


def _strip_newline(line: bytes) -> bytes:
    if line.endswith(b"\n"):
        line = line[:-1]
    if line.endswith(b"\r"):
        line = line[:-1]
    return line


class BadLineError(ValueError):
    """A pair refused under `on_bad_line="fail"`; the message names it."""


def check_on_bad_line(on_bad_line: str) -> str:
    if on_bad_line not in ON_BAD_LINE:
        raise ValueError(
            f"on_bad_line must be one of {ON_BAD_LINE}. Received: "
            f"on_bad_line={on_bad_line!r}"
        )
    return on_bad_line


def bad_line(reason: str, origin: str, source, target) -> BadLineError:
    """The error for a refused pair: reason (a `FILTER_REASONS` name), file
    and line, a snippet."""
    snippet = source[:60] if target is None else (source[:60], target[:60])
    return BadLineError(f"{REASON_MESSAGES[reason]} in {origin}. Received: {snippet!r}")


def decode_pairs(
    raw_pairs: Iterable[tuple[int, bytes, bytes | None]],
    origin,
    on_bad_line: str = "skip",
    counts: Counter | None = None,
    keep_empty: bool = False,
) -> Iterator[tuple[int, str, str]]:
    """Decodes raw pairs, skipping (and counting) or refusing bad ones.

    Args:
        raw_pairs: `(line_id, source, target)` bytes, from `raw_pairs()`.
        origin: `fn(line_id) -> str` naming a pair's file and line.
        on_bad_line: `"skip"` or `"fail"`. Defaults to `"skip"`.
        counts: a `Counter` that receives the skipped pairs by reason
            (`"invalid_utf8"`, `"malformed_line"`, `"empty_source"`,
            `"empty_target"`), or `None`.
        keep_empty: bool. Keep pairs with an empty side (held-out sets keep
            every line). Defaults to `False`.

    Yields:
        `(line_id, source, target)` with str sides.

    Raises:
        BadLineError: with `on_bad_line="fail"`, at the first bad pair.
    """
    check_on_bad_line(on_bad_line)
    counts = Counter() if counts is None else counts
    for line_id, source, target in raw_pairs:
        reason = None
        if target is None:
            reason = "malformed_line"
        else:
            try:
                source, target = source.decode("utf-8"), target.decode("utf-8")
            except UnicodeDecodeError:
                reason = "invalid_utf8"
        if reason is None and not keep_empty:
            if not source.strip():
                reason = "empty_source"
            elif not target.strip():
                reason = "empty_target"
        if reason is None:
            yield line_id, source, target
        elif on_bad_line == "fail":
            raise bad_line(reason, origin(line_id), source, target)
        else:
            counts[reason] += 1


def chunks(iterable: Iterable, size: int) -> Iterator[list]:
    """Consecutive lists of `size` items (the last may be shorter)."""
    iterator = iter(iterable)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk
