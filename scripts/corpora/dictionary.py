"""The Ding corpus: clean-up and classification of German-English dictionary lines.

What belongs here: reading ``/usr/share/trans/de-en`` (``extract_ding``),
splitting a line into entries and ``;``-alternatives, removing the dictionary's
annotations (``ding_clean``) and deciding whether an entry pair is an example
sentence, a short phrase or neither (``classify_ding``).  The heuristics are
summarised in the docstring of ``scripts/build_corpora.py``.
"""

from __future__ import annotations

import collections
import re
from typing import TYPE_CHECKING

from .config import DING_PKG, MAX_WORDS
from .text import normalize_text, word_count

if TYPE_CHECKING:
    from .fetch import Package

_ANNOT = re.compile(r"\s*(\{[^{}]*\}|\[[^\[\]]*\]|<[^<>]*>)")
_PAREN = re.compile(r"\s*\([^()]*\)")
_ABBR = re.compile(r"(?<!\S)/[^/\s][^/]*/(?!\S)")
_SLASH_ALT = re.compile(
    r"(?<![\w/])([^\W\d_][\w'’.-]*)((?:/[^\W\d_][\w'’-]*)+)(?![\w/])"
)
_KEEP_SLASH = {"and/or", "und/oder", "km/h", "he/she", "er/sie"}
_SPACE_PUNCT = re.compile(r"\s+([,!?;:]|\.(?!\.))")
_PLACEHOLDER_WORDS = re.compile(
    r"(?<!\w)(etw|jd[mnrs]|sth|sb)\.|(?<!\w)(sb's|sth's|jds)(?!\w)"
)
_SENT_END = re.compile(r"(?<![.…])[.!?][\"'”“’»«)]*$")
_OPENING_QUOTES = "\"'„“‚‘»«¡¿"


def _first_slash_option(m: re.Match) -> str:
    whole = m.group(0)
    return whole if whole.lower() in _KEEP_SLASH else m.group(1)


def balanced(text: str) -> bool:
    """Whether `text` has as many closing as opening ``()``, ``[]``, ``{}``, ``<>``."""
    return all(text.count(o) == text.count(c) for o, c in ("()", "[]", "{}", "<>"))


def ding_clean(text: str) -> str | None:
    """Strip the annotations of one Ding alternative.

    Removes ``{f}``-style grammar labels, ``[ugs.]``-style usage labels,
    ``<keyword>`` tags, parenthesised remarks (nested ones too) and
    ``/ABBR/`` abbreviations; resolves unspaced slash alternatives to their
    first option (``sheer/pure nonsense`` -> ``sheer nonsense``) except for
    ``and/or``, ``und/oder``, ``km/h``, ``he/she`` and ``er/sie``;
    normalises the text (`text.normalize_text`), removes spaces before
    ``, ! ? ; :`` and a single ``.``, and strips leading and trailing
    spaces, ``;`` and ``,``.

    Args:
        text: one alternative of a dictionary entry.

    Returns:
        The cleaned text (possibly empty), or None when the brackets are
        unbalanced or a spaced slash (``A / B``: alternatives of unclear
        extent) remains.
    """
    if not balanced(text):
        return None
    text = _ANNOT.sub("", text)
    prev = None
    while prev != text:
        prev, text = text, _PAREN.sub("", text)
    text = _ABBR.sub("", text)
    if re.search(r"\s/|/\s", text):
        return None  # spaced slash: phrase-level alternatives of unclear extent
    text = _SLASH_ALT.sub(_first_slash_option, text)
    text = _SPACE_PUNCT.sub(r"\1", normalize_text(text))
    return text.strip(" ;,")


def is_sentence(text: str) -> bool:
    """Whether `text` looks like a sentence.

    It must start (after any opening quotes) with a capital letter or a
    digit, and end with ``.``, ``!`` or ``?`` that is not part of an
    ellipsis, optionally followed by closing quotes or a parenthesis.
    """
    head = text.lstrip(_OPENING_QUOTES)[:1]
    return (
        bool(head)
        and (head.isupper() or head.isdigit())
        and bool(_SENT_END.search(text))
    )


def alternatives(entry: str) -> list[str]:
    """Split an entry on ``;`` outside brackets (``(a; b)`` stays together).

    Args:
        entry: one `` | ``-separated entry of a dictionary side.

    Returns:
        The stripped, non-empty alternatives, in order.
    """
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(entry):
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth = max(depth - 1, 0)
        elif ch == ";" and depth == 0:
            parts.append(entry[start:i])
            start = i + 1
    parts.append(entry[start:])
    return [a for a in (x.strip() for x in parts) if a]


def classify_ding(
    de_raw: str, en_raw: str, stats: collections.Counter
) -> tuple[str, str, str] | None:
    """Classify a German-English alternative pair as sentence, phrase or neither.

    Both sides are cleaned with `ding_clean`.  Pairs with dictionary
    placeholders (``etw.``, ``jdm.``, ``sth.``, ``sb.`` ...) are dropped.  A
    *sentence* pair has both sides `is_sentence`, at least two words a side,
    at least three on one side, at most `config.MAX_WORDS` on either, and
    differing sides.  A *phrase* pair has neither side sentence-like, 2-8
    words a side, a letter on each side and differing sides.

    Args:
        de_raw: the German alternative, as in the dictionary.
        en_raw: the English alternative, as in the dictionary.
        stats: counts of the drop reasons, updated in place.

    Returns:
        ``("sentence" | "phrase", german, english)``, or None to drop it.
    """
    de, en = ding_clean(de_raw), ding_clean(en_raw)
    if de is None or en is None:
        stats["ding: entries dropped, unbalanced brackets or spaced slash"] += 1
        return None
    sentence_like = is_sentence(de) or is_sentence(en)
    prefix = "ding sentence" if sentence_like else "ding phrase"
    if not de or not en:
        return None
    if _PLACEHOLDER_WORDS.search(de) or _PLACEHOLDER_WORDS.search(en):
        stats[f"{prefix}: dropped, dictionary placeholder (etw./sth. ...)"] += 1
        return None
    nde, nen = word_count(de), word_count(en)
    if is_sentence(de) and is_sentence(en):
        if min(nde, nen) < 2 or max(nde, nen) < 3:
            stats["ding sentence: dropped, too short"] += 1
            return None
        if max(nde, nen) > MAX_WORDS:
            stats[f"ding sentence: dropped, longer than {MAX_WORDS} words"] += 1
            return None
        if de == en:
            stats["ding sentence: dropped, identical"] += 1
            return None
        return ("sentence", de, en)
    if sentence_like:
        stats["ding sentence: dropped, only one side looks like a sentence"] += 1
        return None
    if 2 <= nde <= 8 and 2 <= nen <= 8 and de != en:
        if not any(c.isalpha() for c in de) or not any(c.isalpha() for c in en):
            return None
        return ("phrase", de, en)
    return None


def parse_ding_lines(
    lines, stats: collections.Counter
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]], str]:
    """Extract the sentence and phrase pairs of Ding dictionary lines.

    Each line is ``German :: English``; `` | `` separates the entries of a
    line, in the same order on both sides.  Lines whose sides have different
    entry counts are skipped.  When both entries have the same number of
    `alternatives` they are paired one to one, otherwise only the first
    alternatives are paired; each pair goes through `classify_ding`.

    Args:
        lines: an iterable of dictionary lines (a trailing ``\\n`` is ignored);
            lines starting with ``#`` are the file header.
        stats: counts of lines, entries and drop reasons, updated in place.

    Returns:
        ``(sentences, phrases, header)``: the pairs as ``(key, english,
        german)`` tuples, where `key` is the line's German headword (its
        first entry, stripped), and the header lines joined by ``\\n``.
    """
    sentences, phrases = [], []
    header = []
    for line in lines:
        line = line.rstrip("\n")
        if line.startswith("#"):
            header.append(line)
            continue
        if " :: " not in line:
            stats["ding: lines without ' :: '"] += 1
            continue
        stats["ding: dictionary lines"] += 1
        de_side, en_side = line.split(" :: ", 1)
        de_entries, en_entries = de_side.split(" | "), en_side.split(" | ")
        if len(de_entries) != len(en_entries):
            stats["ding: lines skipped, entry counts differ"] += 1
            continue
        key = de_entries[0].strip()
        for de_entry, en_entry in zip(de_entries, en_entries, strict=True):
            stats["ding: entries"] += 1
            de_alts = alternatives(de_entry)
            en_alts = alternatives(en_entry)
            if not de_alts or not en_alts:
                continue
            if len(de_alts) == len(en_alts):
                alt_pairs = list(zip(de_alts, en_alts, strict=True))
            else:
                alt_pairs = [(de_alts[0], en_alts[0])]
            for de_raw, en_raw in alt_pairs:
                kind = classify_ding(de_raw, en_raw, stats)
                if kind is None:
                    continue
                de, en = kind[1], kind[2]
                if kind[0] == "sentence":
                    sentences.append((key, en, de))
                else:
                    phrases.append((key, en, de))
    return sentences, phrases, "\n".join(header)


def extract_ding(
    packages: dict[str, Package], stats: collections.Counter
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]], str]:
    """`parse_ding_lines` of the unpacked dictionary, ``usr/share/trans/de-en``.

    Args:
        packages: the unpacked packages, by name (see `fetch.fetch_packages`).
        stats: counts of lines, entries and drop reasons, updated in place.

    Returns:
        ``(sentences, phrases, header)`` as in `parse_ding_lines`.
    """
    path = packages[DING_PKG].root / "usr/share/trans/de-en"
    with open(path, encoding="utf-8") as f:
        return parse_ding_lines(f, stats)
