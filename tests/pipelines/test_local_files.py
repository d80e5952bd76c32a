import gzip

import pytest

from pipelines import count_lines, read_parallel_files, read_parallel_tsv


def _pairs(dataset):
    return [(s.decode(), t.decode()) for s, t in dataset.as_numpy_iterator()]


def test_two_files_in_order_with_empty_lines_kept(tmp_path):
    (tmp_path / "a.en").write_text("Hello\n\nÄpfel\r\n", encoding="utf-8")
    (tmp_path / "a.de").write_text("Hallo\nleer\nÄpfel\r\n", encoding="utf-8")
    pairs = _pairs(read_parallel_files(tmp_path / "a.en", tmp_path / "a.de"))
    assert pairs == [("Hello", "Hallo"), ("", "leer"), ("Äpfel", "Äpfel")]


def test_tsv_gzip_and_reverse(tmp_path):
    path = tmp_path / "x.tsv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("one\teins\ntwo\tzwei")  # no final newline
    assert _pairs(read_parallel_tsv(path)) == [("one", "eins"), ("two", "zwei")]
    assert _pairs(read_parallel_tsv(path, reverse=True))[1] == ("zwei", "two")
    assert count_lines(path) == 2


def test_line_count_mismatch_names_file_and_line(tmp_path):
    (tmp_path / "s").write_text("a\nb\nc\n", encoding="utf-8")
    (tmp_path / "t").write_text("x\ny\n", encoding="utf-8")
    with pytest.raises(
        ValueError, match=r"Line-count mismatch: .*s has 3 lines, .*t has 2"
    ):
        read_parallel_files(tmp_path / "s", tmp_path / "t")


def test_empty_file(tmp_path):
    (tmp_path / "s").write_text("a\n", encoding="utf-8")
    (tmp_path / "t").write_bytes(b"")
    with pytest.raises(ValueError, match=r"is empty\. Received: path=.*t"):
        read_parallel_files(tmp_path / "s", tmp_path / "t")
    with pytest.raises(ValueError, match="is empty"):
        read_parallel_tsv(tmp_path / "t")


def test_invalid_utf8_names_file_and_line(tmp_path):
    (tmp_path / "s").write_text("a\nb\nc\n", encoding="utf-8")
    (tmp_path / "t").write_bytes(b"x\ny\n\xff\xfez\n")
    with pytest.raises(ValueError, match=r"Invalid UTF-8 in .*t at line 3"):
        read_parallel_files(tmp_path / "s", tmp_path / "t")
    (tmp_path / "p.tsv").write_bytes(b"a\tb\nc\t\xc3\n")
    with pytest.raises(ValueError, match=r"Invalid UTF-8 in .*p.tsv at line 2"):
        read_parallel_tsv(tmp_path / "p.tsv")


def test_tsv_field_count_names_line(tmp_path):
    (tmp_path / "p.tsv").write_text("a\tb\nc\td\te\n", encoding="utf-8")
    with pytest.raises(
        ValueError,
        match=r"Not exactly one tab .* in .*p.tsv at line 2\. Received: b'c\\td\\te'",
    ):
        read_parallel_tsv(tmp_path / "p.tsv")
    (tmp_path / "q.tsv").write_text("a\tb\nno tab\n", encoding="utf-8")
    with pytest.raises(
        ValueError, match=r"Not exactly one tab .* in .*q.tsv at line 2\."
    ):
        read_parallel_tsv(tmp_path / "q.tsv")


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="Received: path="):
        read_parallel_tsv(tmp_path / "nope.tsv")


def test_xz_files_are_read_too(tmp_path):
    import lzma

    with lzma.open(tmp_path / "s.xz", "wt", encoding="utf-8") as f:
        f.write("eins\nzwei\r\n")
    with lzma.open(tmp_path / "t.xz", "wt", encoding="utf-8") as f:
        f.write("one\ntwo\n")
    pairs = _pairs(read_parallel_files(tmp_path / "s.xz", tmp_path / "t.xz"))
    assert pairs == [("eins", "one"), ("zwei", "two")]
