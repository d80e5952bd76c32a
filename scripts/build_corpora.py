#!/usr/bin/env python3
"""Rebuild the bundled parallel corpora under ``pipelines/data/`` from Debian packages.

Nothing is downloaded except through ``apt-get download`` (the configured Debian
mirrors); the packages are unpacked with ``dpkg-deb -x`` into a temporary folder.
Standard library only.  Run as root on Debian 12 (bookworm)::

    python3 scripts/build_corpora.py              # add --apt-update on a fresh box
    python3 scripts/build_corpora.py --debs DIR   # use .deb files already in DIR

Sources
-------
* ``trans-de-en`` (Ding German-English dictionary, GPL-2+): the example sentences
  of the dictionary become ``ding/en-de.{train,dev,test}.tsv.gz``; short phrase
  pairs become the optional, train-only ``ding/en-de.phrases.tsv.gz``.
* ``libreoffice-help-en-us``, ``-de``, ``-fr`` (LibreOffice help, MPL-2.0): the
  help pages (HTML rendered from the .xhp sources, one file per page) are aligned
  across languages by (page path, paragraph id) and become
  ``libreoffice_help/en-{de,fr}.{train,dev,test}.tsv.gz``.
* ``fixture/en-de.tsv``: a few hundred short pairs of the LibreOffice en-de train
  split, plain text, for tests.

Every TSV line is ``english<TAB>foreign``; fields are NFC-normalised, hold no tab
or newline and have their whitespace collapsed to single spaces.  The output is
deterministic: for the same package versions a rerun gives the same bytes (gzip
members are written with mtime 0 and no file name).

Splits
------
* LibreOffice help is split by help page: a page goes to test, dev or train by a
  SHA-256 hash of its path (e.g. ``text/shared/optionen/01020000``), so the
  paragraphs of one page never straddle splits.  en-de and en-fr use the same
  page assignment.
* Ding is split by dictionary entry (one line of the dictionary, keyed by a hash
  of its German headword), so the example sentences of one entry stay together.
* Duplicates are removed across splits: a dev pair whose English or foreign side
  (compared case- and punctuation-insensitively) occurs in test is dropped, and a
  train pair whose either side occurs in dev or test is dropped.  For LibreOffice
  the English sides of both language pairs are pooled for this check.  Exact
  duplicate pairs within a split are kept once.

Ding heuristic
--------------
Each dictionary line is ``German :: English``; `` | `` separates the entries of
a line (headword, inflections, examples ...) in the same order on both sides and
``; `` separates alternatives inside an entry.  Lines whose two sides have a
different number of entries are skipped.  Per entry, annotations are removed
(``{f}``, ``[ugs.]``, ``<keyword>``, ``/ABBR/``, parenthesised remarks or optional
words), unspaced slash alternatives are resolved to their first option
(``sheer/pure nonsense`` -> ``sheer nonsense``; ``and/or`` is kept), and entries
with spaced slash alternatives (``A / B``) or with dictionary placeholders
(``etw.``, ``jdm.``, ``sth.``, ``sb.`` ...) are dropped.  An entry is an example
*sentence* when both sides start with a capital letter (or an opening quote or a
digit), end with ``.``, ``!`` or ``?`` (not an ellipsis; optionally followed by a
closing quote), have at least two words each and at least three on one side.  When
both sides have the same number of ``;``-alternatives they are paired one to one,
otherwise only the first alternatives are paired.  Other entries with 2-8 words
on both sides are *phrase* pairs (first alternatives only, or one to one when the
counts agree); single words are not used.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import hashlib
import html
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "pipelines" / "data"

DING_PKG = "trans-de-en"
LO_PKGS = {
    "en": "libreoffice-help-en-us",
    "de": "libreoffice-help-de",
    "fr": "libreoffice-help-fr",
}
LO_HELP_DIRS = {"en": "en-US", "de": "de", "fr": "fr"}
PACKAGES = [DING_PKG, *LO_PKGS.values()]

# Split assignment: bucket = int(sha256(salt + key)[:8], 16) % 1000.
LO_TEST_BUCKETS = 40  # buckets [0, 40) -> test
LO_DEV_BUCKETS = 40  # buckets [40, 80) -> dev
DING_TEST_BUCKETS = 55
DING_DEV_BUCKETS = 55

MAX_WORDS = 200  # pairs with more words on either side are dropped
MAX_LEN_RATIO = 3.0  # LibreOffice: char-length ratio limit (both sides > 30 chars)
FIXTURE_SIZE = 300
FIXTURE_MAX_WORDS = 30

SPLITS = ("train", "dev", "test")


# --------------------------------------------------------------------------- #
# Generic helpers
# --------------------------------------------------------------------------- #

_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"), None)


def normalize_text(text: str) -> str:
    """NFC, drop invisible characters, collapse all whitespace to one space."""
    text = unicodedata.normalize("NFC", text).translate(_INVISIBLE)
    return " ".join(text.split())


def dedup_key(text: str) -> str:
    """Case- and punctuation-insensitive key used for cross-split deduplication."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def bucket(salt: str, key: str) -> int:
    digest = hashlib.sha256((salt + "\0" + key).encode("utf-8")).hexdigest()
    return int(digest[:8], 16) % 1000


def split_of(b: int, n_test: int, n_dev: int) -> str:
    if b < n_test:
        return "test"
    if b < n_test + n_dev:
        return "dev"
    return "train"


def word_count(text: str) -> int:
    return len(text.split())


def run(cmd: list[str], cwd: Path | None = None) -> str:
    print("+", " ".join(cmd), file=sys.stderr)
    res = subprocess.run(cmd, cwd=cwd, check=True, text=True, stdout=subprocess.PIPE)
    return res.stdout


def write_tsv_gz(path: Path, pairs: list[tuple[str, str]]) -> None:
    data = "".join(f"{s}\t{t}\n" for s, t in pairs).encode("utf-8")
    with open(path, "wb") as raw:
        with gzip.GzipFile(
            filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9
        ) as gz:
            gz.write(data)


def write_tsv(path: Path, pairs: list[tuple[str, str]]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for s, t in pairs:
            f.write(f"{s}\t{t}\n")


def check_field(text: str) -> None:
    assert text and "\t" not in text and "\n" not in text and "\r" not in text


# --------------------------------------------------------------------------- #
# Fetching packages
# --------------------------------------------------------------------------- #


class Package:
    def __init__(self, deb: Path, root: Path):
        self.deb = deb
        self.root = root
        fields = run(["dpkg-deb", "-f", str(deb), "Package", "Version", "Source"])
        info = {}
        for line in fields.splitlines():
            key, _, value = line.partition(":")
            info[key.strip()] = value.strip()
        self.name = info["Package"]
        self.version = info["Version"]
        self.source = (info.get("Source") or self.name).split()[0]

    @property
    def copyright_text(self) -> str:
        path = self.root / "usr/share/doc" / self.name / "copyright"
        return path.read_text(encoding="utf-8")


def fetch_packages(
    work: Path, debs_dir: Path | None, apt_update: bool
) -> dict[str, Package]:
    deb_dir = work / "debs"
    deb_dir.mkdir()
    if debs_dir is not None:
        for name in PACKAGES:
            found = sorted(debs_dir.glob(f"{name}_*.deb"))
            if len(found) != 1:
                sys.exit(f"expected exactly one {name}_*.deb in {debs_dir}")
            shutil.copy(found[0], deb_dir)
    else:
        # Let the unprivileged _apt user write the downloads (avoids a warning).
        os.chmod(work, 0o755)
        os.chmod(deb_dir, 0o777)
        if apt_update:
            run(["apt-get", "update"])
        try:
            run(["apt-get", "download", *PACKAGES], cwd=deb_dir)
        except subprocess.CalledProcessError:
            if apt_update:
                raise
            print("apt-get download failed; apt-get update, retry", file=sys.stderr)
            run(["apt-get", "update"])
            run(["apt-get", "download", *PACKAGES], cwd=deb_dir)
    packages = {}
    for name in PACKAGES:
        (deb,) = sorted(deb_dir.glob(f"{name}_*.deb"))
        root = work / "root" / name
        root.mkdir(parents=True)
        run(["dpkg-deb", "-x", str(deb), str(root)])
        packages[name] = Package(deb, root)
        print(f"{name} {packages[name].version}")
    return packages


# --------------------------------------------------------------------------- #
# LibreOffice help
# --------------------------------------------------------------------------- #

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


def parse_help_page(path: Path) -> dict[str, list[str]]:
    parser = HelpPageParser()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    by_id: dict[str, list[str]] = collections.defaultdict(list)
    for pid, text in parser.units:
        by_id[pid].append(normalize_text(html.unescape(text)))
    return by_id


_PLACEHOLDER = re.compile(r"^(\$\[\w+\]|%\w+%?|https?://\S+|[\w.-]+\.(xhp|html?))$")


def is_placeholder(text: str) -> bool:
    return not any(ch.isalpha() for ch in text) or bool(_PLACEHOLDER.match(text))


def extract_libreoffice(
    packages: dict[str, Package], stats: collections.Counter
) -> dict[str, list[tuple[str, str, str]]]:
    """Return {lang: [(page, english, foreign), ...]} in page/document order."""
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


def lo_drop_reason(s: str, t: str) -> str | None:
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


# --------------------------------------------------------------------------- #
# Ding
# --------------------------------------------------------------------------- #

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


def ding_clean(text: str) -> str | None:
    """Strip Ding annotations; None if unbalanced or with ambiguous alternatives."""
    if not _balanced(text):
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
    """Starts with a capital letter or digit and ends with . ! or ?"""
    head = text.lstrip(_OPENING_QUOTES)[:1]
    return (
        bool(head)
        and (head.isupper() or head.isdigit())
        and bool(_SENT_END.search(text))
    )


def _alternatives(entry: str) -> list[str]:
    """Split an entry on ``;`` outside brackets (``(a; b)`` stays together)."""
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


def _balanced(text: str) -> bool:
    return all(text.count(o) == text.count(c) for o, c in ("()", "[]", "{}", "<>"))


def extract_ding(
    packages: dict[str, Package], stats: collections.Counter
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]], str]:
    """Return (sentences, phrases, file header); pairs are (key, en, de) tuples."""
    path = packages[DING_PKG].root / "usr/share/trans/de-en"
    sentences, phrases = [], []
    header = []
    with open(path, encoding="utf-8") as f:
        for line in f:
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
                de_alts = _alternatives(de_entry)
                en_alts = _alternatives(en_entry)
                if not de_alts or not en_alts:
                    continue
                if len(de_alts) == len(en_alts):
                    alt_pairs = list(zip(de_alts, en_alts, strict=True))
                else:
                    alt_pairs = [(de_alts[0], en_alts[0])]
                for de_raw, en_raw in alt_pairs:
                    kind = _classify_ding(de_raw, en_raw, stats)
                    if kind is None:
                        continue
                    de, en = kind[1], kind[2]
                    if kind[0] == "sentence":
                        sentences.append((key, en, de))
                    else:
                        phrases.append((key, en, de))
    return sentences, phrases, "\n".join(header)


def _classify_ding(de_raw: str, en_raw: str, stats: collections.Counter):
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


# --------------------------------------------------------------------------- #
# Splitting and deduplication
# --------------------------------------------------------------------------- #


def assign_splits(
    items: list[tuple[str, str, str]], salt: str, n_test: int, n_dev: int
) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {s: [] for s in SPLITS}
    for key, s, t in items:
        out[split_of(bucket(salt, key), n_test, n_dev)].append((s, t))
    return out


def dedup_splits(
    splits_by_pair: dict[str, dict[str, list[tuple[str, str]]]],
    stats: collections.Counter,
    label: str,
    pool_english: bool,
) -> dict[str, dict[str, list[tuple[str, str]]]]:
    """Remove within-split duplicate pairs and cross-split overlaps.

    ``splits_by_pair`` maps a language pair name to its {split: pairs}.  A pair
    is kept in ``dev`` only if neither side occurs in ``test``, and in ``train``
    only if neither side occurs in ``dev`` or ``test`` (case- and
    punctuation-insensitively).  With ``pool_english`` the English sides of all
    language pairs are pooled for this check.
    """
    held: dict[str, set[str]] = collections.defaultdict(set)  # name -> keys
    result: dict[str, dict[str, list[tuple[str, str]]]] = {
        name: {} for name in splits_by_pair
    }
    for split in ("test", "dev", "train"):
        for name, splits in splits_by_pair.items():
            seen_pairs = set()
            kept = []
            for s, t in splits[split]:
                ks, kt = "en:" + dedup_key(s), name + ":" + dedup_key(t)
                en_held = held["*" if pool_english else name]
                if split != "test" and (ks in en_held or kt in held[name]):
                    stats[f"{label} {name}: {split} dropped, in a held-out split"] += 1
                    continue
                if (ks, kt) in seen_pairs:
                    stats[f"{label} {name}: {split} dropped, duplicate pair"] += 1
                    continue
                seen_pairs.add((ks, kt))
                kept.append((s, t))
            result[name][split] = kept
        if split != "train":
            for name in splits_by_pair:
                for s, t in result[name][split]:
                    held["*" if pool_english else name].add("en:" + dedup_key(s))
                    held[name].add(name + ":" + dedup_key(t))
    return result


# --------------------------------------------------------------------------- #
# Notices and README
# --------------------------------------------------------------------------- #


def copyright_stanza(text: str, files: str) -> str:
    """Return the ``Files: <files>`` stanza of a machine-readable copyright file."""
    for stanza in re.split(r"\n\s*\n", text):
        if stanza.startswith(f"Files: {files}\n"):
            return stanza.strip("\n")
    raise ValueError(f"no 'Files: {files}' stanza")


def copy_license(name: str, dest: Path) -> None:
    src = Path("/usr/share/common-licenses") / name
    shutil.copyfile(src, dest)


def ding_version(header: str) -> str:
    m = re.search(r"^# Version :: (.*)$", header, re.M)
    return m.group(1).strip() if m else "unknown"


def write_ding_notice(out: Path, pkg: Package, header: str) -> None:
    dict_version = ding_version(header)
    text = f"""# Ding German-English dictionary: licence notice and attribution

The files in this folder are derived from the Ding German-English dictionary
by Frank Richter (TU Chemnitz), <https://dict.tu-chemnitz.de/>, as shipped in the
Debian package `{pkg.name}` version `{pkg.version}` (source package `{pkg.source}`),
file `/usr/share/trans/de-en` (dictionary version "{dict_version}").

The dictionary file begins:

```
{header}
```

Licensed under the GNU General Public License, version 2 or (at your option)
any later version (GPL-2+); the full text of the GPL version 2 is in `LICENSE`.

**Modifications.** The example sentences and short phrases of the dictionary were
extracted, their annotations (grammar, usage and subject labels, parenthesised
remarks) removed, slash alternatives reduced to their first option, and the pairs
split into train/dev/test by `scripts/build_corpora.py` in this repository,
which rebuilds these files from the Debian package above.  The unmodified
dictionary is available from the upstream site
(<https://ftp.tu-chemnitz.de/pub/Local/urz/ding/>) and from Debian
(`apt-get source {pkg.source}`).

This corpus is distributed in the hope that it will be useful, but WITHOUT ANY
WARRANTY; without even the implied warranty of MERCHANTABILITY or FITNESS FOR A
PARTICULAR PURPOSE.  See the GNU General Public License for more details.

## Debian copyright file (`/usr/share/doc/{pkg.name}/copyright`)

```
{pkg.copyright_text.strip()}
```
"""
    (out / "NOTICE.md").write_text(text, encoding="utf-8")
    copy_license("GPL-2", out / "LICENSE")


def write_lo_notice(out: Path, pkgs: list[Package], fixture: bool = False) -> None:
    versions = "\n".join(
        f"* `{p.name}` version `{p.version}` (source package `{p.source}`)"
        for p in pkgs
    )
    stanza = copyright_stanza(pkgs[0].copyright_text, "*")
    texts = {p.copyright_text for p in pkgs}
    same = f" (identical in all {len(pkgs)} packages)" if len(texts) == 1 else ""
    what = (
        "The file in this folder is a small sample of the LibreOffice help en-de\n"
        "train split in `../libreoffice_help/`; it is"
        if fixture
        else "The files in this folder are"
    )
    text = f"""# LibreOffice help: licence notice and attribution

{what} derived from the LibreOffice help
(<https://help.libreoffice.org/>, sources at <https://git.libreoffice.org/help>
and <https://git.libreoffice.org/translations>), as shipped in the Debian packages

{versions}

(HTML help pages under `/usr/share/libreoffice/help/<lang>/text/`).

Copyright 2000, 2010 Oracle and/or its affiliates; copyright (c) 2000, 2010
LibreOffice contributors and/or their affiliates; translations by the
LibreOffice translation teams.  This Source Code Form is subject to the terms of
the Mozilla Public License, v. 2.0 (full text in `LICENSE`).  If a copy of the
MPL was not distributed with this file, You can obtain one at
<https://mozilla.org/MPL/2.0/>.  Some help files include material licensed to the
Apache Software Foundation under the Apache License 2.0 (see the notice below).

**Modifications.** The help paragraphs were aligned across languages by page and
paragraph id, their markup removed, whitespace normalised, and the pairs split
into train/dev/test by `scripts/build_corpora.py` in this repository, which
rebuilds these files from the Debian packages above.

## Debian copyright file, `Files: *` stanza

From `/usr/share/doc/{pkgs[0].name}/copyright`{same}:

```
{stanza}
```
"""
    (out / "NOTICE.md").write_text(text, encoding="utf-8")
    copy_license("MPL-2.0", out / "LICENSE")


def write_readme(
    out: Path,
    packages: dict[str, Package],
    counts: dict[str, int],
    sizes: dict[str, int],
    dict_version: str,
) -> None:
    rows = "\n".join(
        f"| `{name}` | {counts[name]:,} | {sizes[name]:,} |" for name in sorted(counts)
    )
    versions = "\n".join(f"| `{p.name}` | `{p.version}` |" for p in packages.values())
    total = sum(sizes.values())
    text = f"""# Bundled parallel corpora

Real parallel text for the default training job, rebuilt from Debian packages by
`scripts/build_corpora.py` (no download at run time).  Every line of a `.tsv`
(or gzipped `.tsv.gz`) file is one pair, `english<TAB>foreign`, UTF-8, NFC,
whitespace collapsed; fields never contain tabs or newlines.

* `ding/` (GPL-2+): English-German example sentences (and, separately, short
  phrases) of the Ding German-English dictionary, Debian package `trans-de-en`.
  Everyday language.
* `libreoffice_help/` (MPL-2.0): English-German and English-French paragraphs of
  the LibreOffice help, aligned by help page and paragraph id, Debian packages
  `libreoffice-help-en-us`, `libreoffice-help-de`, `libreoffice-help-fr`.
  Software documentation: UI labels, headings, instructions, function reference.
* `fixture/` (MPL-2.0): {FIXTURE_SIZE} short pairs of the LibreOffice en-de train
  split, plain text, for tests.

Each folder holds its licence (`LICENSE`) and attribution (`NOTICE.md`).

## Files

| file | pairs | bytes |
|---|---:|---:|
{rows}

Total: {total:,} bytes.

`ding/en-de.phrases.tsv.gz` is an optional, train-only supplement of short
dictionary phrases (2-8 words a side) from the dictionary entries of the train
split; the `train`/`dev`/`test` files of `ding/` hold whole sentences only.

## Splits

* The **test** split is for final evaluation only: never train or tune on it.
  Use **dev** for validation, early stopping and hyper-parameter choices.
* LibreOffice help is split by help page (SHA-256 of the page path), so
  paragraphs of one page never straddle splits; en-de and en-fr use the same
  pages for each split.  Ding is split by dictionary entry (its German headword).
* Deduplicated across splits: no English or foreign side of a train pair occurs in
  dev or test, and none of a dev pair occurs in test (compared case- and
  punctuation-insensitively; for LibreOffice the English of en-de and en-fr is
  pooled).  Exact duplicate pairs within a split are kept once.
* Pairs with more than {MAX_WORDS} words on either side are dropped.
* Pairs are stored in source order (help page / dictionary order), not
  shuffled: shuffle the train split when training.

## How it was built

On Debian 12 (bookworm), as root, from the repository root:

```
python3 scripts/build_corpora.py --apt-update
```

It runs `apt-get download` for the four packages into a temporary folder,
unpacks them with `dpkg-deb -x`, extracts, aligns, cleans and splits the text,
and rewrites this folder (this README included).  Output is byte-for-byte
deterministic for the same package versions.  `--debs DIR` uses `.deb` files
already in `DIR` instead of `apt-get download`.  The extraction heuristics are
documented at the top of the script.

Package versions used:

| package | version |
|---|---|
{versions}

Ding dictionary file version: "{dict_version}".
"""
    (out / "README.md").write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------- #
# Main
# --------------------------------------------------------------------------- #


def pick_fixture(train: list[tuple[str, str]]) -> list[tuple[str, str]]:
    candidates = [
        p
        for p in train
        if 3 <= word_count(p[0]) <= FIXTURE_MAX_WORDS
        and word_count(p[1]) <= FIXTURE_MAX_WORDS
    ]
    candidates.sort(key=lambda p: hashlib.sha256(f"{p[0]}\t{p[1]}".encode()).digest())
    return candidates[:FIXTURE_SIZE]


def show_samples(name: str, pairs: list[tuple[str, str]], n: int) -> None:
    if n <= 0 or not pairs:
        return
    rng = random.Random(name)
    print(f"\n--- {n} random pairs of {name} ---")
    for s, t in rng.sample(pairs, min(n, len(pairs))):
        print(f"  EN: {s}\n  XX: {t}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    ap.add_argument("--debs", type=Path, help="use the .deb files in this folder")
    ap.add_argument(
        "--apt-update", action="store_true", help="run apt-get update first"
    )
    ap.add_argument(
        "--show", type=int, default=0, metavar="N", help="print N random pairs a file"
    )
    ap.add_argument("--keep-work", action="store_true", help="keep the temp folder")
    args = ap.parse_args(argv)

    stats: collections.Counter = collections.Counter()
    work = Path(tempfile.mkdtemp(prefix="build_corpora."))
    try:
        packages = fetch_packages(work, args.debs, args.apt_update)

        # LibreOffice help.
        lo = extract_libreoffice(packages, stats)
        lo_splits = {
            f"en-{lang}": assign_splits(
                items, "libreoffice-help", LO_TEST_BUCKETS, LO_DEV_BUCKETS
            )
            for lang, items in lo.items()
        }
        lo_final = dedup_splits(lo_splits, stats, "lo", pool_english=True)

        # Ding.
        sentences, phrases, ding_header = extract_ding(packages, stats)
        ding_splits = assign_splits(
            sentences, "ding", DING_TEST_BUCKETS, DING_DEV_BUCKETS
        )
        ding_final = dedup_splits({"en-de": ding_splits}, stats, "ding", False)["en-de"]
        held_en = {dedup_key(s) for sp in ("dev", "test") for s, _ in ding_final[sp]}
        held_de = {dedup_key(t) for sp in ("dev", "test") for _, t in ding_final[sp]}
        phrase_pairs, seen = [], set()
        for key, s, t in phrases:
            if split_of(bucket("ding", key), DING_TEST_BUCKETS, DING_DEV_BUCKETS) != (
                "train"
            ):
                stats["ding phrase: dropped, entry in dev/test"] += 1
                continue
            if dedup_key(s) in held_en or dedup_key(t) in held_de:
                stats["ding phrase: dropped, overlaps dev/test"] += 1
                continue
            if (s, t) in seen:
                stats["ding phrase: dropped, duplicate"] += 1
                continue
            seen.add((s, t))
            phrase_pairs.append((s, t))

        # Write.
        out: Path = args.out
        for sub in ("ding", "libreoffice_help", "fixture"):
            if (out / sub).exists():
                shutil.rmtree(out / sub)
            (out / sub).mkdir(parents=True)
        files: dict[str, list[tuple[str, str]]] = {}
        for name, splits in lo_final.items():
            for split in SPLITS:
                files[f"libreoffice_help/{name}.{split}.tsv.gz"] = splits[split]
        for split in SPLITS:
            files[f"ding/en-de.{split}.tsv.gz"] = ding_final[split]
        files["ding/en-de.phrases.tsv.gz"] = phrase_pairs
        files["fixture/en-de.tsv"] = pick_fixture(lo_final["en-de"]["train"])

        counts, sizes = {}, {}
        for rel, pairs in sorted(files.items()):
            for s, t in pairs:
                check_field(s)
                check_field(t)
            path = out / rel
            if rel.endswith(".gz"):
                write_tsv_gz(path, pairs)
            else:
                write_tsv(path, pairs)
            counts[rel] = len(pairs)
            sizes[rel] = path.stat().st_size

        lo_pkgs = [packages[p] for p in LO_PKGS.values()]
        write_lo_notice(out / "libreoffice_help", lo_pkgs)
        write_lo_notice(out / "fixture", lo_pkgs, fixture=True)
        write_ding_notice(out / "ding", packages[DING_PKG], ding_header)
        write_readme(out, packages, counts, sizes, ding_version(ding_header))

        print("\n=== extraction statistics ===")
        for key in sorted(stats):
            print(f"{stats[key]:>9,}  {key}")
        print("\n=== output ===")
        for rel in sorted(counts):
            print(f"{counts[rel]:>9,} pairs  {sizes[rel]:>10,} bytes  {rel}")
        print(f"total {sum(sizes.values()):,} bytes")
        for rel, pairs in sorted(files.items()):
            show_samples(rel, pairs, args.show)
    finally:
        if args.keep_work:
            print(f"work folder kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
