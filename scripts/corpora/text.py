"""Text helpers shared by every corpus: normalisation, keys, TSV fields and files.

What belongs here: functions on a single string or a list of pairs that do not
know where the text came from (LibreOffice help or Ding).  Source-specific
cleaning lives in ``help_html`` and ``dictionary``.
"""

from __future__ import annotations

import gzip
import unicodedata
from pathlib import Path

_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"), None)


def normalize_text(text: str) -> str:
    """Normalise a field: NFC, no invisible characters, single spaces.

    Soft hyphens, zero-width spaces and joiners, word joiners and byte-order
    marks are removed; every run of whitespace (tabs and newlines included)
    becomes one space, and leading and trailing whitespace is dropped.

    Args:
        text: the raw text.

    Returns:
        The normalised text.
    """
    text = unicodedata.normalize("NFC", text).translate(_INVISIBLE)
    return " ".join(text.split())


def dedup_key(text: str) -> str:
    """Return the key used to find one side of a pair in another split.

    The key is case- and punctuation-insensitive: the case-folded text with
    every character that is not a letter or a digit removed.

    Args:
        text: one side of a pair.

    Returns:
        The key (possibly empty).
    """
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def word_count(text: str) -> int:
    """Return the number of whitespace-separated words of `text`."""
    return len(text.split())


def check_field(text: str) -> None:
    """Check that `text` can be written as one TSV field.

    Args:
        text: one side of a pair.

    Raises:
        ValueError: if `text` is empty or holds a tab, newline or carriage
            return.
    """
    if not text or "\t" in text or "\n" in text or "\r" in text:
        raise ValueError(
            "A TSV field must be non-empty and hold no tab, newline or carriage "
            f"return. Received: text={text!r}"
        )


def write_tsv_gz(path: Path, pairs: list[tuple[str, str]]) -> None:
    """Write `pairs` as gzipped ``english<TAB>foreign`` lines, reproducibly.

    The gzip member has mtime 0 and no file name, so the same pairs always
    give the same bytes.

    Args:
        path: the ``.tsv.gz`` file to write.
        pairs: the ``(english, foreign)`` pairs, in order.
    """
    data = "".join(f"{s}\t{t}\n" for s, t in pairs).encode("utf-8")
    with open(path, "wb") as raw:
        with gzip.GzipFile(
            filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9
        ) as gz:
            gz.write(data)


def write_tsv(path: Path, pairs: list[tuple[str, str]]) -> None:
    """Write `pairs` as plain UTF-8 ``english<TAB>foreign`` lines (``\\n`` ends).

    Args:
        path: the ``.tsv`` file to write.
        pairs: the ``(english, foreign)`` pairs, in order.
    """
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for s, t in pairs:
            f.write(f"{s}\t{t}\n")
