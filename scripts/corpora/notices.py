"""Licence notices, attribution and the corpus README: templating and writing.

What belongs here: the text of ``NOTICE.md`` (one per corpus folder), the
copying of the licence texts (``LICENSE``) and the text of
``pipelines/data/README.md``.  The ``*_text`` functions only render strings;
the ``write_*`` functions put them (and the licences) on disk.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from .config import FIXTURE_SIZE, MAX_WORDS

if TYPE_CHECKING:
    from .fetch import Package

COMMON_LICENSES = Path("/usr/share/common-licenses")


def copyright_stanza(text: str, files: str) -> str:
    """Return the ``Files: <files>`` stanza of a machine-readable copyright file.

    Args:
        text: the Debian ``copyright`` file (DEP-5 format).
        files: the ``Files:`` value to look for, e.g. ``"*"``.

    Returns:
        The stanza, without surrounding newlines.

    Raises:
        ValueError: if no stanza starts with ``Files: <files>``.
    """
    for stanza in re.split(r"\n\s*\n", text):
        if stanza.startswith(f"Files: {files}\n"):
            return stanza.strip("\n")
    raise ValueError(f"no 'Files: {files}' stanza")


def copy_license(name: str, dest: Path) -> None:
    """Copy ``/usr/share/common-licenses/<name>`` to `dest`."""
    shutil.copyfile(COMMON_LICENSES / name, dest)


def ding_version(header: str) -> str:
    """Return the ``# Version :: ...`` value of the Ding header, or "unknown"."""
    m = re.search(r"^# Version :: (.*)$", header, re.M)
    return m.group(1).strip() if m else "unknown"


def ding_notice_text(pkg: Package, header: str) -> str:
    """Render ``ding/NOTICE.md``.

    Args:
        pkg: the ``trans-de-en`` package (`name`, `version`, `source` and
            `copyright_text` are used).
        header: the ``#`` header lines of the dictionary file.

    Returns:
        The Markdown text.
    """
    dict_version = ding_version(header)
    return f"""# Ding German-English dictionary: licence notice and attribution

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


def write_ding_notice(out: Path, pkg: Package, header: str) -> None:
    """Write `ding_notice_text` to ``out/NOTICE.md``, the GPL-2 to ``out/LICENSE``."""
    (out / "NOTICE.md").write_text(ding_notice_text(pkg, header), encoding="utf-8")
    copy_license("GPL-2", out / "LICENSE")


def lo_notice_text(pkgs: list[Package], fixture: bool = False) -> str:
    """Render ``libreoffice_help/NOTICE.md`` (or ``fixture/NOTICE.md``).

    Args:
        pkgs: the LibreOffice help packages, English first; the ``Files: *``
            stanza is taken from the first one's copyright file.
        fixture: render the notice of the ``fixture/`` sample instead.

    Returns:
        The Markdown text.
    """
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
    return f"""# LibreOffice help: licence notice and attribution

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


def write_lo_notice(out: Path, pkgs: list[Package], fixture: bool = False) -> None:
    """Write `lo_notice_text` to ``out/NOTICE.md``, the MPL-2.0 to ``out/LICENSE``."""
    (out / "NOTICE.md").write_text(lo_notice_text(pkgs, fixture), encoding="utf-8")
    copy_license("MPL-2.0", out / "LICENSE")


# Kept by the rebuild: the GUM trees are bundled by hand, not by this script.
GUM_SECTION = """
## Bundled constituency trees: GUM

`gum/` holds 4,636 English constituency trees in Penn Treebank brackets from
the GUM corpus (the genres whose texts are CC BY or CC BY-SA; trees CC BY 4.0),
for the English constituency parsing task of the paper (§6.3):
`gum/train.ptb.gz` 3,707 trees, `gum/dev.ptb.gz` 438, `gum/test.ptb.gz` 491,
split by document as GUM's `splits.md` (`gum/documents.txt`).  The folder holds
GUM's licence and annotator list (`LICENSE-GUM.txt`) and its own `README.md`
(origin, licences per genre, format).  Read them with
`pipelines.load_bundled_trees(split)`, which normalises them as
`pipelines.read_treebank` normalises the WSJ (root `TOP`, function tags
stripped).

These are **silver trees**: GUM's constituency layer is parser output from gold
part-of-speech tags, not hand-corrected trees, so F1 on them is not comparable
with the paper's WSJ section 23 figures (Table 4).  They are not rebuilt by
`scripts/build_corpora.py`.
"""


def readme_text(
    packages: dict[str, Package],
    counts: dict[str, int],
    sizes: dict[str, int],
    dict_version: str,
) -> str:
    """Render ``pipelines/data/README.md``.

    Args:
        packages: the packages used, by name (`name` and `version` are used).
        counts: the number of pairs of each output file, by relative path.
        sizes: the size in bytes of each output file, by relative path.
        dict_version: the Ding dictionary version (`ding_version`).

    Returns:
        The Markdown text.
    """
    rows = "\n".join(
        f"| `{name}` | {counts[name]:,} | {sizes[name]:,} |" for name in sorted(counts)
    )
    versions = "\n".join(f"| `{p.name}` | `{p.version}` |" for p in packages.values())
    total = sum(sizes.values())
    return (
        f"""# Bundled parallel corpora

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
        + GUM_SECTION
    )


def write_readme(
    out: Path,
    packages: dict[str, Package],
    counts: dict[str, int],
    sizes: dict[str, int],
    dict_version: str,
) -> None:
    """Write `readme_text` to ``out/README.md`` (same arguments)."""
    text = readme_text(packages, counts, sizes, dict_version)
    (out / "README.md").write_text(text, encoding="utf-8")
