import gzip
import hashlib
import lzma
import os
from collections import Counter

import pytest

from pipelines import (
    BadLineError,
    CorpusPart,
    DatasetCorpus,
    ParallelCorpus,
    decode_pairs,
    file_unchanged,
    scan_file,
)
from pipelines.text.parallel_corpus import chunks


def write(path, data: bytes):
    opener = {".gz": gzip.open, ".xz": lzma.open}.get(os.path.splitext(path)[1], open)
    with opener(path, "wb") as f:
        f.write(data)
    return str(path)


@pytest.mark.parametrize("suffix", ["", ".gz", ".xz"])
def test_scan_counts_lines_and_fingerprints_the_bytes_on_disk(tmp_path, suffix):
    path = write(tmp_path / f"a.txt{suffix}", b"one\ntwo\nthree")  # no last newline
    summary = scan_file(path)
    assert summary.lines == 3
    with open(path, "rb") as f:
        on_disk = f.read()
    assert summary.sha256 == hashlib.sha256(on_disk).hexdigest()
    assert summary.bytes == len(on_disk)


def test_scan_refuses_empty_and_missing_files(tmp_path):
    with pytest.raises(ValueError, match="empty.*empty.txt"):
        scan_file(write(tmp_path / "empty.txt", b""))
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        scan_file(tmp_path / "missing.txt")


def test_line_count_mismatch_names_both_files_and_counts(tmp_path):
    source = write(tmp_path / "c.en", b"a\nb\nc\n")
    target = write(tmp_path / "c.de.gz", b"a\nb\n")
    corpus = ParallelCorpus([CorpusPart(source, target)])
    with pytest.raises(ValueError) as error:
        corpus.scan()
    message = str(error.value)
    assert f"{source} has 3 lines, {target} has 2" in message
    assert "\n" not in message


def test_two_files_and_tsv_parts_concatenate_with_their_origins(tmp_path):
    source = write(tmp_path / "c.en", b"hello\r\nworld\n")
    target = write(tmp_path / "c.de", b"hallo\r\nwelt\n")
    tsv = write(tmp_path / "d.tsv.xz", b"Haus\thouse\nno tab here\nx\ty\tz\n")
    corpus = ParallelCorpus([CorpusPart(source, target), CorpusPart(tsv, reverse=True)])
    assert [[s.lines for s in part] for part in corpus.scan()] == [[2, 2], [3]]
    raw = list(corpus.raw_pairs())
    assert [(s, t) for _, s, t in raw] == [
        (b"hello", b"hallo"),
        (b"world", b"welt"),
        (b"house", b"Haus"),  # reversed: the right column is the source
        (b"no tab here", None),  # malformed: not exactly one tab
        (b"x\ty\tz", None),
    ]
    assert corpus.origin(raw[1][0]) == f"{source} and {target} at line 2"
    assert corpus.origin(raw[4][0]) == f"{tsv} at line 3"


def test_decode_skips_and_counts_by_reason(tmp_path):
    tsv = write(
        tmp_path / "c.tsv",
        b"good\tgut\n\xff\xfebad\tschlecht\n \tleer\nempty\t\nno tab\nfine\tfein\n",
    )
    corpus = ParallelCorpus([CorpusPart(tsv)])
    counts = Counter()
    kept = list(decode_pairs(corpus.raw_pairs(), corpus.origin, "skip", counts))
    assert [(s, t) for _, s, t in kept] == [("good", "gut"), ("fine", "fein")]
    assert counts == {
        "invalid_utf8": 1,
        "empty_source": 1,
        "empty_target": 1,
        "malformed_line": 1,
    }
    # Held-out data keeps empty sides (but not undecodable lines).
    with pytest.raises(BadLineError, match=f"Invalid UTF-8 in {tsv} at line 2"):
        list(decode_pairs(corpus.raw_pairs(), corpus.origin, "fail", keep_empty=True))


@pytest.mark.parametrize(
    "content, reason, line",
    [
        (b"a\tb\n\xc3\x28\tc\n", "Invalid UTF-8", 2),
        (b"a\tb\nc\td\n\tx\n", "Empty source side", 3),
        (b"a\t \n", "Empty target side", 1),
        (b"a\tb\nc\n", "Not exactly one tab \\(a TSV line is source<TAB>target\\)", 2),
    ],
)
def test_decode_fails_on_the_first_bad_line_naming_file_and_line(
    tmp_path, content, reason, line
):
    tsv = write(tmp_path / "c.tsv", content)
    corpus = ParallelCorpus([CorpusPart(tsv)])
    with pytest.raises(BadLineError, match=f"^{reason} in {tsv} at line {line}\\."):
        list(decode_pairs(corpus.raw_pairs(), corpus.origin, "fail"))


def test_file_unchanged_accepts_a_touch_and_refuses_an_edit(tmp_path):
    path = write(tmp_path / "a.txt", b"one\ntwo\n")
    summary = scan_file(path).to_dict()
    assert file_unchanged(summary)
    os.utime(path, ns=(1, 1))  # same content, other time: fingerprinted again
    assert file_unchanged(summary)
    write(path, b"one\ntwx\n")  # same size, other content
    assert not file_unchanged(summary)
    os.remove(path)
    assert not file_unchanged(summary)


def test_dataset_corpus_streams_a_dataset(fixture_pairs):
    corpus = DatasetCorpus(fixture_pairs.take(5), "fixture all")
    raw = list(corpus.raw_pairs())
    assert len(raw) == 5 and corpus.origin(raw[2][0]) == "fixture all at example 3"
    expected = [tuple(pair) for pair in fixture_pairs.take(5).as_numpy_iterator()]
    assert [(s, t) for _, s, t in raw] == expected


def test_chunks():
    assert list(chunks(range(7), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(chunks([], 3)) == []
