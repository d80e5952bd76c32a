"""Tests of scripts.corpora.dictionary: Ding clean-up and sentence/phrase filters."""

import collections
from types import SimpleNamespace

import pytest

from scripts.corpora.dictionary import (
    alternatives,
    balanced,
    classify_ding,
    ding_clean,
    extract_ding,
    is_sentence,
    parse_ding_lines,
)


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("Haus {n}", "Haus"),  # grammar label
        ("gehen [ugs.]", "gehen"),  # usage label
        ("Rechner <Computer>", "Rechner"),  # keyword
        ("(sich) verlaufen", "verlaufen"),  # parenthesised optional word
        ("Auto (der (alte) Wagen)", "Auto"),  # nested parentheses
        ("Vereinte Nationen /UN/", "Vereinte Nationen"),  # abbreviation
        ("sheer/pure nonsense", "sheer nonsense"),  # first slash option
        ("Farbe/Lack/Lasur {f}", "Farbe"),
        ("you and/or me", "you and/or me"),  # kept slash words
        ("50 km/h", "50 km/h"),
        ("He/She is here.", "He/She is here."),  # case-insensitive keep list
        ("Hello , world !", "Hello, world!"),  # no space before punctuation
        ("Er wartet .", "Er wartet."),
        ("Wait ...", "Wait ..."),  # an ellipsis keeps its space
        ("; Haus ,", "Haus"),  # leading / trailing ; and , stripped
        ("Er hat es satt. [ugs.]", "Er hat es satt."),
        ("  viele \t Leerzeichen  ", "viele Leerzeichen"),
        ("{n}", ""),  # nothing left
        ("Wind / Sturm", None),  # spaced slash: unclear alternatives
        ("Haus (alt", None),  # unbalanced brackets
        ("Haus {n]", None),
    ],
)
def test_ding_clean(raw, expected):
    assert ding_clean(raw) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Er kommt.", True),
        ("Kommst du?", True),
        ("Komm her!", True),
        ("3 Äpfel reichen.", True),  # a digit starts a sentence
        ("„Komm!“", True),  # opening and closing quotes
        ("»Ja.«", True),
        ("Er sagte (leise).", True),
        ("(Er kam.)", False),  # a parenthesis is no opening quote
        ("er kommt.", False),  # lower-case start
        ("Warte...", False),  # ellipsis
        ("Warte…", False),
        ("Haus", False),  # no end mark
        ("", False),
    ],
)
def test_is_sentence(text, expected):
    assert is_sentence(text) is expected


@pytest.mark.parametrize(
    "entry, expected",
    [
        ("a; b (c; d); e", ["a", "b (c; d)", "e"]),
        ("x {f; pl}; y [a; b]; z <k; l>", ["x {f; pl}", "y [a; b]", "z <k; l>"]),
        (" ; x;", ["x"]),
        ("a) ; b", ["a)", "b"]),  # a stray closing bracket does not go negative
        ("", []),
    ],
)
def test_alternatives(entry, expected):
    assert alternatives(entry) == expected


def test_balanced():
    assert balanced("(a) [b] {c} <d>")
    assert balanced("no brackets")
    assert not balanced("a)")
    assert not balanced("<a")


@pytest.mark.parametrize(
    "de, en, expected, stat",
    [
        (
            "Er kommt morgen. [ugs.]",
            "He is coming tomorrow.",
            ("sentence", "Er kommt morgen.", "He is coming tomorrow."),
            None,
        ),
        # two words a side is enough if one side has three
        (
            "Komm sofort her!",
            "Come here!",
            ("sentence", "Komm sofort her!", "Come here!"),
            None,
        ),
        ("Komm her!", "Come here!", None, "ding sentence: dropped, too short"),
        ("Komm!", "Come along now!", None, "ding sentence: dropped, too short"),
        (
            "Die Katze ist da.",
            "Die Katze ist da.",
            None,
            "ding sentence: dropped, identical",
        ),
        (
            "Guten Morgen!",
            "good morning",
            None,
            "ding sentence: dropped, only one side looks like a sentence",
        ),
        (
            "Gib es jdm. zurück.",
            "Give it back to sb.",
            None,
            "ding sentence: dropped, dictionary placeholder (etw./sth. ...)",
        ),
        (
            "etw. geben",
            "to give sth.",
            None,
            "ding phrase: dropped, dictionary placeholder (etw./sth. ...)",
        ),
        (
            "jds Haus",
            "sb's house",
            None,
            "ding phrase: dropped, dictionary placeholder (etw./sth. ...)",
        ),
        (
            "Haus (",
            "house",
            None,
            "ding: entries dropped, unbalanced brackets or spaced slash",
        ),
        (
            "Wind / Sturm",
            "wind",
            None,
            "ding: entries dropped, unbalanced brackets or spaced slash",
        ),
        (
            "ein großes Haus {n}",
            "a big house",
            ("phrase", "ein großes Haus", "a big house"),
            None,
        ),
        ("Haus {n}", "house", None, None),  # single words are not used
        ("eins zwei drei vier fünf sechs sieben acht neun", "one two", None, None),
        ("gleiche Wörter", "gleiche Wörter", None, None),
        ("Nr. 5", "No. 5", ("phrase", "Nr. 5", "No. 5"), None),
        ("{n}", "house", None, None),  # empty after clean-up
    ],
)
def test_classify_ding(de, en, expected, stat):
    stats = collections.Counter()
    assert classify_ding(de, en, stats) == expected
    assert stats == ({stat: 1} if stat else {})


def test_classify_ding_word_limit():
    stats = collections.Counter()
    long_de = "Ein " + "sehr " * 199 + "langer Satz."  # 202 words
    long_en = "A " + "very " * 199 + "long sentence."
    assert classify_ding(long_de, long_en, stats) is None
    assert stats == {"ding sentence: dropped, longer than 200 words": 1}
    ok_de = "Ein " + "sehr " * 197 + "langer Satz."  # 200 words
    assert classify_ding(ok_de, "A long sentence.", stats)[0] == "sentence"


LINES = [
    "# Version :: 1.9 2020-06-01\n",
    "# Copyright (c) Frank Richter\n",
    "ein altes Haus {n} | alte Häuser {pl} :: an old house | old houses\n",
    "Haus {n} | Er wohnt in einem Haus.; Sie wohnt in einem Haus. :: "
    "house | He lives in a house.; She lives in a house.\n",
    "a | b :: c\n",
    "no separator here\n",
    "Geh sofort weg!; Hau ab! :: Go away now!\n",
]


def test_parse_ding_lines():
    stats = collections.Counter()
    sentences, phrases, header = parse_ding_lines(LINES, stats)
    assert sentences == [
        ("Haus {n}", "He lives in a house.", "Er wohnt in einem Haus."),
        ("Haus {n}", "She lives in a house.", "Sie wohnt in einem Haus."),
        # unequal alternative counts: only the first ones are paired
        ("Geh sofort weg!; Hau ab!", "Go away now!", "Geh sofort weg!"),
    ]
    assert phrases == [
        ("ein altes Haus {n}", "an old house", "ein altes Haus"),
        ("ein altes Haus {n}", "old houses", "alte Häuser"),
    ]
    assert header == "# Version :: 1.9 2020-06-01\n# Copyright (c) Frank Richter"
    assert stats == {
        "ding: dictionary lines": 4,
        "ding: lines without ' :: '": 1,
        "ding: lines skipped, entry counts differ": 1,
        "ding: entries": 5,
    }


def test_extract_ding_reads_the_unpacked_file(tmp_path):
    path = tmp_path / "usr/share/trans/de-en"
    path.parent.mkdir(parents=True)
    path.write_text("".join(LINES), encoding="utf-8")
    packages = {"trans-de-en": SimpleNamespace(root=tmp_path)}
    stats = collections.Counter()
    assert extract_ding(packages, stats) == parse_ding_lines(
        LINES, collections.Counter()
    )
    assert stats["ding: entries"] == 5
