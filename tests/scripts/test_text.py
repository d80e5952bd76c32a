"""Tests of scripts.corpora.text: normalisation, keys, TSV fields and files."""

import gzip
import re

import pytest

from scripts.corpora.text import (
    check_field,
    dedup_key,
    normalize_text,
    word_count,
    write_tsv,
    write_tsv_gz,
)


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("  a\tb\n\nc  ", "a b c"),  # every whitespace run -> one space, stripped
        ("a\u00a0b\u2009c", "a b c"),  # no-break and thin spaces are whitespace
        ("e\u0301t\u00e9", "\u00e9t\u00e9"),  # NFC: e + combining acute -> é
        ("soft\u00adhyphen", "softhyphen"),
        ("zero\u200bwidth\u200c\u200djoiners\u2060", "zerowidthjoiners"),
        ("\ufeffBOM", "BOM"),
        ("a \u200b b", "a b"),  # removing an invisible char leaves one space
        ("", ""),
        (" \n\t ", ""),
    ],
)
def test_normalize_text(raw, expected):
    assert normalize_text(raw) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Hello, World!", "helloworld"),
        ("hello world", "helloworld"),
        ("Straße", "strasse"),  # case folding, not just lower()
        ("Tools - Options...", "toolsoptions"),
        ("Version 7.4", "version74"),
        ("...", ""),
    ],
)
def test_dedup_key(text, expected):
    assert dedup_key(text) == expected


def test_word_count():
    assert word_count("  one two\tthree\n") == 3
    assert word_count("one") == 1
    assert word_count("") == 0


def test_check_field_accepts_a_plain_field():
    check_field("a b, c.")


@pytest.mark.parametrize("bad", ["", "a\tb", "a\nb", "a\rb"])
def test_check_field_names_the_bad_value(bad):
    with pytest.raises(ValueError, match=re.escape(f"Received: text={bad!r}")):
        check_field(bad)


PAIRS = [("Hello.", "Hallo."), ("Straße", "street")]


def test_write_tsv(tmp_path):
    path = tmp_path / "x.tsv"
    write_tsv(path, PAIRS)
    assert path.read_bytes() == "Hello.\tHallo.\nStraße\tstreet\n".encode()


def test_write_tsv_gz_is_reproducible(tmp_path):
    a, b = tmp_path / "a.tsv.gz", tmp_path / "b.tsv.gz"
    write_tsv_gz(a, PAIRS)
    write_tsv_gz(b, PAIRS)
    data = a.read_bytes()
    assert data == b.read_bytes()  # no file name, no time stamp
    assert data[:2] == b"\x1f\x8b"
    assert data[3] & 0x08 == 0  # FNAME flag unset
    assert data[4:8] == b"\0\0\0\0"  # MTIME 0
    assert gzip.decompress(data) == "Hello.\tHallo.\nStraße\tstreet\n".encode()


def test_write_tsv_gz_empty(tmp_path):
    path = tmp_path / "e.tsv.gz"
    write_tsv_gz(path, [])
    assert gzip.decompress(path.read_bytes()) == b""
