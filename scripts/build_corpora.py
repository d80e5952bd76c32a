#!/usr/bin/env python3
"""Rebuild the bundled parallel corpora under ``pipelines/data/`` from Debian packages.

Nothing is downloaded except through ``apt-get download`` (the configured Debian
mirrors); the packages are unpacked with ``dpkg-deb -x`` into a temporary folder.
Standard library only.  Run as root on Debian 12 (bookworm)::

    python3 scripts/build_corpora.py              # add --apt-update on a fresh box
    python3 scripts/build_corpora.py --debs DIR   # use .deb files already in DIR
    python3 -m scripts.corpora --debs DIR         # the same, from the repo root

The code is the package ``scripts/corpora/``, one module per step (``fetch``,
``help_html``, ``dictionary``, ``split``, ``notices``; ``cli`` runs them in
order); this file is its entry point.

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
  the English sides of both language pairs are pooled for this check.  Duplicate
  pairs within a split (same sides, compared the same way) are kept once.

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

import sys
from pathlib import Path

if __name__ == "__main__":
    # Run as a file, sys.path[0] is scripts/: put the repository root first.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from scripts.corpora.cli import main

    sys.exit(main())
