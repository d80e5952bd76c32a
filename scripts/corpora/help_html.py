"""The LibreOffice help corpus: HTML parsing, cross-language alignment, filters.

What belongs here: reading the rendered help pages (``HelpPageParser``), pairing
the paragraphs of an English page with those of its translation by paragraph
id (``extract_libreoffice``), and deciding which aligned pairs to drop
(``lo_drop_reason``).  Splitting is in ``split``.
"""

from __future__ import annotations

import collections
import html
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING

from .config import LO_HELP_DIRS, LO_PKGS, MAX_LEN_RATIO, MAX_WORDS
from .text import normalize_text, word_count

if TYPE_CHECKING:
    from .fetch import Package

_VOID = {
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link",
    "meta", "param", "source", "track", "wbr",
}  # fmt: skip
_UNIT_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6"}


class HelpPageParser(HTMLParser):
    """Collect the text of every paragraph or heading that carries an id.

    The HTML help is rendered from the .xhp sources: each <paragraph> becomes a
    <p>/<hN> with the paragraph id; inline markup (<emph>, <item>, <link>,
    <ahelp>, ...) becomes <span>/<a> whose text is kept.  <switchinline> and
    <switch> become a span of hidden per-case spans (MAC/WIN/CALC/.../default);
    only the default case is kept, or the first case when there is no default.
    Code blocks, scripts and the page chrome carry no paragraph id and are skipped.
    Ids starting with ``bm_`` (bookmarks) are not paragraphs.

    After `feed` and `close`, `units` holds ``(id, raw text)`` pairs in
    document order; the text is not yet normalised (see `parse_help_page`).
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[dict] = []
        self.sinks: list[list[str] | None] = []
        self.units: list[tuple[str, str]] = []

    # A sink is where character data goes: a list, or None to discard it.
    def _emit(self, text: str) -> None:
        if self.sinks and self.sinks[-1] is not None:
            self.sinks[-1].append(text)

    def handle_starttag(self, tag, attrs):
        a = {k: (v or "") for k, v in attrs}
        if tag in _VOID:
            if tag == "br":
                self._emit(" ")
            return
        classes = a.get("class", "").split()
        entry = {"tag": tag, "kind": None}
        parent = self.stack[-1] if self.stack else None
        if tag in ("script", "style"):
            entry["kind"] = "skip"
            self.sinks.append(None)
        elif parent is not None and parent["kind"] == "switch":
            entry["kind"] = "case"
            buf: list[str] = []
            parent["cases"].append((a.get("id", "").startswith("default"), buf))
            self.sinks.append(buf)
        elif "switchinline" in classes or "switch" in classes:
            entry["kind"] = "switch"
            entry["cases"] = []
            self.sinks.append(None)
        elif tag in _UNIT_TAGS and a.get("id") and not a["id"].startswith("bm_"):
            entry["kind"] = "unit"
            entry["id"] = a["id"]
            self.sinks.append([])
        self.stack.append(entry)

    def handle_endtag(self, tag):
        if tag in _VOID:
            return
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i]["tag"] == tag:
                break
        else:
            return  # stray end tag
        while len(self.stack) > i:
            self._close(self.stack.pop())

    def _close(self, entry: dict) -> None:
        kind = entry["kind"]
        if kind is None:
            if entry["tag"] in ("p", "div", "li", "td", "th", "tr"):
                self._emit(" ")
            return
        buf = self.sinks.pop()
        if kind == "switch":
            cases = entry["cases"]
            chosen = next((b for d, b in cases if d), cases[0][1] if cases else [])
            self._emit("".join(chosen))
        elif kind == "unit":
            self.units.append((entry["id"], "".join(buf)))

    def handle_data(self, data):
        self._emit(data)

    def close(self):
        super().close()
        while self.stack:
            self._close(self.stack.pop())


def parse_html(source: str) -> dict[str, list[str]]:
    """Return the normalised paragraph texts of one help page, by paragraph id.

    Args:
        source: the HTML of the page.

    Returns:
        ``{paragraph id: [text, ...]}``: an id used more than once keeps all
        its texts, in document order.  Each text is unescaped a second time
        (the help double-escapes some entities) and passed through
        `text.normalize_text`.
    """
    parser = HelpPageParser()
    parser.feed(source)
    parser.close()
    by_id: dict[str, list[str]] = collections.defaultdict(list)
    for pid, text in parser.units:
        by_id[pid].append(normalize_text(html.unescape(text)))
    return by_id


def parse_help_page(path: Path) -> dict[str, list[str]]:
    """`parse_html` of the UTF-8 file at `path`."""
    return parse_html(path.read_text(encoding="utf-8"))


_PLACEHOLDER = re.compile(r"^(\$\[\w+\]|%\w+%?|https?://\S+|[\w.-]+\.(xhp|html?))$")


def is_placeholder(text: str) -> bool:
    """Whether `text` is no prose: no letter at all, a ``$[officename]``-style
    variable, a ``%PRODUCTNAME``-style placeholder, a URL or a file name."""
    return not any(ch.isalpha() for ch in text) or bool(_PLACEHOLDER.match(text))


def lo_drop_reason(s: str, t: str) -> str | None:
    """Return why an aligned help pair is dropped, or None to keep it.

    A pair is dropped when a side is empty or a placeholder (`is_placeholder`),
    when both sides are identical (untranslated), when a side has more than
    `config.MAX_WORDS` words, when both sides are longer than 30 characters
    and one is more than `config.MAX_LEN_RATIO` times as long as the other,
    or when one side has at most 30 characters and the other more than 120.

    Args:
        s: the English paragraph.
        t: the foreign paragraph.

    Returns:
        The reason, as used in the extraction statistics, or None.
    """
    if not s or not t:
        return "empty"
    if is_placeholder(s) or is_placeholder(t):
        return "placeholder / no letters"
    if s == t:
        return "identical in both languages (untranslated, names, code)"
    if word_count(s) > MAX_WORDS or word_count(t) > MAX_WORDS:
        return f"longer than {MAX_WORDS} words"
    ls, lt = len(s), len(t)
    if min(ls, lt) > 30 and max(ls, lt) / min(ls, lt) > MAX_LEN_RATIO:
        return f"length ratio > {MAX_LEN_RATIO}"
    if min(ls, lt) <= 30 and max(ls, lt) > 120:
        return "short vs long (likely misaligned)"
    return None


def extract_libreoffice(
    packages: dict[str, Package], stats: collections.Counter
) -> dict[str, list[tuple[str, str, str]]]:
    """Align the English help with the German and French help, page by page.

    Only pages present in both languages are read.  A paragraph id missing
    from the translation, or used a different number of times in the two
    pages, drops its paragraphs; the remaining pairs go through
    `lo_drop_reason`.

    Args:
        packages: the unpacked packages, by name (see `fetch.fetch_packages`).
        stats: counts of pages, aligned paragraphs and drop reasons, updated
            in place.

    Returns:
        ``{lang: [(page, english, foreign), ...]}`` for ``de`` and ``fr``, in
        page then document order; `page` is the page path without suffix,
        e.g. ``text/shared/optionen/01020000``.
    """
    roots = {
        lang: packages[pkg].root / "usr/share/libreoffice/help" / LO_HELP_DIRS[lang]
        for lang, pkg in LO_PKGS.items()
    }
    pages = {
        lang: {
            p.relative_to(root).with_suffix("").as_posix()
            for p in (root / "text").rglob("*.html")
        }
        for lang, root in roots.items()
    }
    stats["lo pages en"] = len(pages["en"])
    out: dict[str, list[tuple[str, str, str]]] = {}
    for lang in ("de", "fr"):
        pairs = []
        common = sorted(pages["en"] & pages[lang])
        stats[f"lo {lang}: pages in both languages"] = len(common)
        stats[f"lo {lang}: en pages missing in {lang}"] = len(pages["en"] - pages[lang])
        for page in common:
            en = parse_help_page(roots["en"] / (page + ".html"))
            fo = parse_help_page(roots[lang] / (page + ".html"))
            for pid, en_texts in en.items():
                fo_texts = fo.get(pid)
                if fo_texts is None:
                    stats[f"lo {lang}: dropped, id missing in {lang}"] += len(en_texts)
                    continue
                if len(fo_texts) != len(en_texts):
                    stats[f"lo {lang}: dropped, id repeated unequally"] += len(en_texts)
                    continue
                for s, t in zip(en_texts, fo_texts, strict=True):
                    stats[f"lo {lang}: aligned paragraphs"] += 1
                    reason = lo_drop_reason(s, t)
                    if reason:
                        stats[f"lo {lang}: dropped, {reason}"] += 1
                        continue
                    pairs.append((page, s, t))
        out[lang] = pairs
    return out
