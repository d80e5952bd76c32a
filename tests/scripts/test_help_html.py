"""Tests of scripts.corpora.help_html: HTML parsing, alignment and the filters."""

import collections
from types import SimpleNamespace

import pytest

from scripts.corpora.help_html import (
    extract_libreoffice,
    is_placeholder,
    lo_drop_reason,
    parse_html,
)

PAGE = """<!DOCTYPE html>
<html><head><title>Page title</title>
<script>var s = "<p id='par_9'>not text</p>";</script>
<style>p { color: red; }</style></head>
<body>
<div class="chrome"><a href="index.html">Contents</a></div>
<p id="par_1">Choose <span class="menuitem">Tools -
  Options</span>.</p>
<h2 id="hd_2">A   heading</h2>
<p id="bm_id3150499">a bookmark, not a paragraph</p>
<p>No id: skipped</p>
<p id="par_3">Press <span class="switchinline">junk<span id="MAC" class="hidden"
>Command</span><span id="default" class="hidden">Ctrl</span></span>+C.</p>
<p id="par_4">First<br>line &amp;amp; more&nbsp;text</p>
<p id="par_5">Open <span class="switch"><span id="WIN">Windows</span
><span id="LIN">Linux</span></span> now</span></p>
<p id="par_1">Again\u00ad</p>
</body></html>
"""


def test_parse_html_on_a_page():
    by_id = parse_html(PAGE)
    assert dict(by_id) == {
        "par_1": ["Choose Tools - Options.", "Again"],
        "hd_2": ["A heading"],
        "par_3": ["Press Ctrl+C."],
        "par_4": ["First line & more text"],
        "par_5": ["Open Windows now"],
    }
    assert list(by_id) == ["par_1", "hd_2", "par_3", "par_4", "par_5"]


def test_parse_html_flushes_unclosed_paragraphs():
    assert dict(parse_html('<p id="a">one<p id="b">two')) == {
        "a": ["one"],
        "b": ["two"],
    }


def test_parse_html_switch_without_cases_is_empty():
    assert dict(parse_html('<p id="a">x<span class="switch"></span>y</p>')) == {
        "a": ["xy"]
    }


def test_parse_html_block_ends_add_a_space():
    html = '<h1 id="t"><div>one</div><div>two</div></h1>'
    assert dict(parse_html(html)) == {"t": ["one two"]}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("$[officename]", True),
        ("%PRODUCTNAME", True),
        ("%PRODUCTNAME%", True),
        ("https://help.libreoffice.org/latest", True),
        ("main0108.xhp", True),
        ("index.html", True),
        ("12 + 3 = 15", True),  # no letter
        ("", True),
        ("$[officename] Writer", False),
        ("Open the file.", False),
        ("text/shared/main0108.xhp", False),  # a path, not a bare file name
    ],
)
def test_is_placeholder(text, expected):
    assert is_placeholder(text) is expected


@pytest.mark.parametrize(
    "s, t, expected",
    [
        ("", "Hallo", "empty"),
        ("Hello", "", "empty"),
        ("$[officename]", "$[officename] Writer", "placeholder / no letters"),
        ("Hello", "1234", "placeholder / no letters"),
        ("Writer", "Writer", "identical in both languages (untranslated, names, code)"),
        (" ".join(["word"] * 201), "Wort", "longer than 200 words"),
        (" ".join(["word"] * 200), " ".join(["Wort"] * 200), None),
        ("a" * 31, "b" * 94, "length ratio > 3.0"),  # 94 / 31 = 3.03
        ("a" * 31, "b" * 93, None),  # 93 / 31 = 3.0 is allowed
        ("Save", "c" * 121, "short vs long (likely misaligned)"),
        ("a" * 30, "c" * 121, "short vs long (likely misaligned)"),
        ("Save", "c" * 120, None),
        ("Opens the Find dialog.", "Ouvre la boîte de dialogue Rechercher.", None),
    ],
)
def test_lo_drop_reason(s, t, expected):
    assert lo_drop_reason(s, t) == expected


def _help_tree(tmp_path, lang_dir, pages):
    root = tmp_path / lang_dir
    for rel, body in pages.items():
        path = root / "usr/share/libreoffice/help" / lang_dir / "text" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"<html><body>{body}</body></html>", encoding="utf-8")
    return SimpleNamespace(root=root)


def test_extract_libreoffice_aligns_by_page_and_id(tmp_path):
    en = {
        "shared/a.html": '<p id="p1">Open a file.</p><p id="p2">Close it.</p>'
        '<p id="p3">Writer</p><p id="p4">Only in English.</p>',
        "shared/b.html": '<p id="r">Once.</p><p id="r">Twice.</p>',
        "shared/c.html": '<p id="x">Not in German.</p>',
    }
    de = {
        "shared/a.html": '<p id="p2">Schließen.</p><p id="p1">Eine Datei öffnen.</p>'
        '<p id="p3">Writer</p>',
        "shared/b.html": '<p id="r">Einmal.</p>',
    }
    fr = {
        "shared/a.html": '<p id="p1">Ouvrir un fichier.</p>',
        "shared/b.html": '<p id="r">Une fois.</p><p id="r">Deux fois.</p>',
        "shared/c.html": '<p id="x">Pas en allemand.</p>',
    }
    packages = {
        "libreoffice-help-en-us": _help_tree(tmp_path, "en-US", en),
        "libreoffice-help-de": _help_tree(tmp_path, "de", de),
        "libreoffice-help-fr": _help_tree(tmp_path, "fr", fr),
    }
    stats = collections.Counter()
    out = extract_libreoffice(packages, stats)
    assert out == {
        "de": [
            ("text/shared/a", "Open a file.", "Eine Datei öffnen."),
            ("text/shared/a", "Close it.", "Schließen."),
        ],
        "fr": [
            ("text/shared/a", "Open a file.", "Ouvrir un fichier."),
            ("text/shared/b", "Once.", "Une fois."),
            ("text/shared/b", "Twice.", "Deux fois."),
            ("text/shared/c", "Not in German.", "Pas en allemand."),
        ],
    }
    assert stats == {
        "lo pages en": 3,
        "lo de: pages in both languages": 2,
        "lo de: en pages missing in de": 1,
        "lo de: aligned paragraphs": 3,
        "lo de: dropped, identical in both languages (untranslated, names, code)": 1,
        "lo de: dropped, id missing in de": 1,
        "lo de: dropped, id repeated unequally": 2,
        "lo fr: pages in both languages": 3,
        "lo fr: en pages missing in fr": 0,
        "lo fr: aligned paragraphs": 4,
        "lo fr: dropped, id missing in fr": 3,
    }
