"""Tests of scripts.corpora.fetch (no external commands run) and the command line."""

from pathlib import Path

import pytest

from scripts.corpora import cli, config, fetch


def test_parse_fields():
    text = "Package: trans-de-en\nVersion: 1.9-6\nSource: ding (1.9-1)\n"
    assert fetch.parse_fields(text) == {
        "Package": "trans-de-en",
        "Version": "1.9-6",
        "Source": "ding (1.9-1)",
    }
    assert fetch.parse_fields("Version: 4:7.4.7-1+deb12u14") == {
        "Version": "4:7.4.7-1+deb12u14"  # only the first colon separates
    }


@pytest.mark.parametrize(
    "fields, source",
    [
        ("Package: trans-de-en\nVersion: 1.9-6\nSource: ding (1.9-1)\n", "ding"),
        ("Package: trans-de-en\nVersion: 1.9-6\n", "trans-de-en"),
    ],
)
def test_package(tmp_path, monkeypatch, fields, source):
    calls = []
    monkeypatch.setattr(fetch, "run", lambda cmd: calls.append(cmd) or fields)
    doc = tmp_path / "usr/share/doc/trans-de-en"
    doc.mkdir(parents=True)
    (doc / "copyright").write_text("Files: *\n", encoding="utf-8")
    pkg = fetch.Package(Path("t.deb"), tmp_path)
    assert calls == [["dpkg-deb", "-f", "t.deb", "Package", "Version", "Source"]]
    assert (pkg.name, pkg.version, pkg.source) == ("trans-de-en", "1.9-6", source)
    assert pkg.copyright_text == "Files: *\n"


def test_fetch_packages_names_the_missing_deb(tmp_path):
    debs = tmp_path / "debs_in"
    debs.mkdir()
    (debs / "trans-de-en_1.9-6_all.deb").write_bytes(b"")
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(SystemExit) as exc:
        fetch.fetch_packages(work, debs, apt_update=False)
    assert exc.value.code == (
        f"expected exactly one libreoffice-help-en-us_*.deb in {debs}"
    )


def test_default_out_is_the_bundled_data():
    root = Path(__file__).resolve().parents[2]
    assert config.REPO_ROOT == root
    assert config.DEFAULT_OUT == root / "pipelines" / "data"


def test_parser_defaults_and_options():
    args = cli.build_parser().parse_args([])
    assert vars(args) == {
        "out": config.DEFAULT_OUT,
        "debs": None,
        "apt_update": False,
        "show": 0,
        "keep_work": False,
    }
    args = cli.build_parser().parse_args(
        ["--out", "o", "--debs", "d", "--apt-update", "--show", "3", "--keep-work"]
    )
    assert (args.out, args.debs, args.apt_update, args.show, args.keep_work) == (
        Path("o"),
        Path("d"),
        True,
        3,
        True,
    )


def test_show_samples(capsys):
    pairs = [("a", "A"), ("b", "B"), ("c", "C")]
    cli.show_samples("name", pairs, 0)
    cli.show_samples("name", [], 2)
    assert capsys.readouterr().out == ""
    cli.show_samples("name", pairs, 2)
    first = capsys.readouterr().out
    cli.show_samples("name", pairs, 2)
    assert capsys.readouterr().out == first  # seeded by the name
    assert first == (
        "\n--- 2 random pairs of name ---\n  EN: b\n  XX: B\n  EN: a\n  XX: A\n"
    )
