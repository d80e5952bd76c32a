"""Tests of scripts.corpora.notices: NOTICE.md, LICENSE and README.md templating."""

from types import SimpleNamespace

import pytest

from scripts.corpora import notices

COPYRIGHT = """Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: LibreOffice

Files: *
Copyright: 2000, 2010 Oracle and/or its affiliates.
License: MPL-2.0

Files: debian/*
Copyright: 2002-2023 Debian LibreOffice Maintainers
License: GPL-3+
"""


def _pkg(name, version="1:1.0-1", source="libreoffice", copyright_text=COPYRIGHT):
    return SimpleNamespace(
        name=name, version=version, source=source, copyright_text=copyright_text
    )


def test_copyright_stanza():
    assert notices.copyright_stanza(COPYRIGHT, "*") == (
        "Files: *\nCopyright: 2000, 2010 Oracle and/or its affiliates.\n"
        "License: MPL-2.0"
    )
    assert notices.copyright_stanza(COPYRIGHT, "debian/*") == (
        "Files: debian/*\nCopyright: 2002-2023 Debian LibreOffice Maintainers\n"
        "License: GPL-3+"
    )


def test_copyright_stanza_names_the_missing_stanza():
    with pytest.raises(ValueError, match=r"no 'Files: src/\*' stanza"):
        notices.copyright_stanza(COPYRIGHT, "src/*")


def test_ding_version():
    header = "# Version :: 1.9 2020-06-01 \n# Copyright (c) :: Frank Richter"
    assert notices.ding_version(header) == "1.9 2020-06-01"
    assert notices.ding_version("# no version here") == "unknown"


def test_lo_notice_text():
    pkgs = [_pkg("help-en", "1:7.4"), _pkg("help-de", "1:7.5", source="lo")]
    text = notices.lo_notice_text(pkgs)
    assert text.startswith(
        "# LibreOffice help: licence notice and attribution\n\n"
        "The files in this folder are derived from the LibreOffice help\n"
    )
    assert (
        "Debian packages\n\n"
        "* `help-en` version `1:7.4` (source package `libreoffice`)\n"
        "* `help-de` version `1:7.5` (source package `lo`)\n\n"
        "(HTML help pages"
    ) in text
    assert text.endswith(
        "From `/usr/share/doc/help-en/copyright` (identical in all 2 packages):\n\n"
        "```\nFiles: *\nCopyright: 2000, 2010 Oracle and/or its affiliates.\n"
        "License: MPL-2.0\n```\n"
    )
    assert "by `scripts/build_corpora.py` in this repository" in text


def test_lo_notice_text_fixture_and_differing_copyrights():
    other = COPYRIGHT.replace("Oracle", "Someone")
    pkgs = [_pkg("help-en"), _pkg("help-fr", copyright_text=other)]
    text = notices.lo_notice_text(pkgs, fixture=True)
    assert text.startswith(
        "# LibreOffice help: licence notice and attribution\n\n"
        "The file in this folder is a small sample of the LibreOffice help en-de\n"
        "train split in `../libreoffice_help/`; it is derived from the LibreOffice "
        "help\n"
    )
    # The stanza is the first package's; no "identical" remark.
    assert "From `/usr/share/doc/help-en/copyright`:\n\n```\nFiles: *\n" in text
    assert "Oracle and/or its affiliates.\nLicense" in text


def test_ding_notice_text():
    pkg = _pkg("trans-de-en", "1.9-6", "ding", "Format: x\n\nFiles: *\n\n")
    header = "# Version :: 1.9 2020-06-01\n# Copyright (c) Frank Richter"
    text = notices.ding_notice_text(pkg, header)
    assert (
        "Debian package `trans-de-en` version `1.9-6` (source package `ding`),\n"
        'file `/usr/share/trans/de-en` (dictionary version "1.9 2020-06-01").\n\n'
        "The dictionary file begins:\n\n"
        "```\n# Version :: 1.9 2020-06-01\n# Copyright (c) Frank Richter\n```\n"
    ) in text
    assert "(`apt-get source ding`)." in text
    assert text.endswith(
        "## Debian copyright file (`/usr/share/doc/trans-de-en/copyright`)\n\n"
        "```\nFormat: x\n\nFiles: *\n```\n"
    )


def test_readme_text():
    packages = {
        "a": _pkg("trans-de-en", "1.9-6"),
        "b": _pkg("libreoffice-help-de", "4:7.4.7-1"),
    }
    counts = {"libreoffice_help/x.tsv.gz": 1234, "ding/y.tsv.gz": 5}
    sizes = {"libreoffice_help/x.tsv.gz": 10, "ding/y.tsv.gz": 1234567}
    text = notices.readme_text(packages, counts, sizes, "1.9 2020")
    assert (
        "| file | pairs | bytes |\n|---|---:|---:|\n"
        "| `ding/y.tsv.gz` | 5 | 1,234,567 |\n"
        "| `libreoffice_help/x.tsv.gz` | 1,234 | 10 |\n\n"
        "Total: 1,234,577 bytes.\n"
    ) in text
    assert (
        "| package | version |\n|---|---|\n"
        "| `trans-de-en` | `1.9-6` |\n"
        "| `libreoffice-help-de` | `4:7.4.7-1` |\n\n"
        'Ding dictionary file version: "1.9 2020".\n'
    ) in text
    # The hand-bundled GUM trees' section comes last, kept by a rebuild.
    assert text.endswith(notices.GUM_SECTION)
    assert "## Bundled constituency trees: GUM" in notices.GUM_SECTION
    assert "* `fixture/` (MPL-2.0): 300 short pairs" in text
    assert "* Pairs with more than 200 words on either side are dropped.\n" in text
    assert "\n```\npython3 scripts/build_corpora.py --apt-update\n```\n" in text


def test_writers(tmp_path, monkeypatch):
    licenses = tmp_path / "licenses"
    licenses.mkdir()
    (licenses / "GPL-2").write_text("GPL text\n")
    (licenses / "MPL-2.0").write_text("MPL text\n")
    monkeypatch.setattr(notices, "COMMON_LICENSES", licenses)
    pkg = _pkg("help-en")
    lo, ding = tmp_path / "lo", tmp_path / "ding"
    lo.mkdir()
    ding.mkdir()

    notices.write_lo_notice(lo, [pkg], fixture=True)
    assert (lo / "NOTICE.md").read_text() == notices.lo_notice_text([pkg], True)
    assert (lo / "LICENSE").read_text() == "MPL text\n"

    notices.write_ding_notice(ding, pkg, "# h")
    assert (ding / "NOTICE.md").read_text() == notices.ding_notice_text(pkg, "# h")
    assert (ding / "LICENSE").read_text() == "GPL text\n"

    notices.write_readme(tmp_path, {"p": pkg}, {"f": 1}, {"f": 2}, "v")
    assert (tmp_path / "README.md").read_text() == notices.readme_text(
        {"p": pkg}, {"f": 1}, {"f": 2}, "v"
    )
