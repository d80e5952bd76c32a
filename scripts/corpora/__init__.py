"""Rebuild the bundled parallel corpora under ``pipelines/data/`` from Debian packages.

The implementation of ``scripts/build_corpora.py``, whose docstring documents
the sources, the output format, the splits and the Ding heuristics.  Standard
library only.  One module per job:

* ``config``: paths, package names, split sizes and length limits.
* ``text``: normalisation, deduplication keys, TSV fields and files.
* ``fetch``: ``apt-get download`` / ``dpkg-deb -x`` of the Debian packages.
* ``help_html``: parsing, aligning and filtering the LibreOffice help pages.
* ``dictionary``: cleaning and classifying the Ding dictionary lines.
* ``split``: hash-based train/dev/test splits, deduplication, the fixture.
* ``notices``: ``NOTICE.md``, ``LICENSE`` and ``README.md`` templating.
* ``cli``: the command line and the order of the steps.

Run from the repository root as ``python3 scripts/build_corpora.py`` or
``python3 -m scripts.corpora`` (same arguments).
"""
