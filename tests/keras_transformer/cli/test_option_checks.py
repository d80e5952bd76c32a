"""Options checked when parsed, against each other and what they name."""

import json

import pytest

from keras_transformer import cli
from tests.keras_transformer.cli.conftest import user_error


@pytest.fixture
def export_dir(tmp_path):
    """A folder with only an export's record: the checks read nothing else."""
    record = {
        "decoding": {
            "method": "beam",
            "beam_size": 2,
            "n_best": 1,
            "max_beam_size": 2,
            "max_extra_length_limit": 50,
        }
    }
    extra = tmp_path / "export" / "1" / "assets.extra"
    extra.mkdir(parents=True)
    (extra / "record.json").write_text(json.dumps(record))
    return str(tmp_path / "export" / "1")


@pytest.mark.parametrize(
    "options, words",
    [
        (["--beam-size", "3"], "above the export's maximum beam size 2"),
        (["--max-extra-length", "51"], "above the export's extra length limit 50"),
        (["--n-best", "3"], "--n-best cannot exceed the beam size 2"),
        (["--beam-size", "1", "--n-best", "2"], "Received: n_best=2, beam_size=1"),
    ],
)
def test_decoding_options_beyond_the_exports_record(export_dir, options, words, capsys):
    err = user_error(["translate", "--export", export_dir, *options], capsys)
    assert words in err and "record.json" in err or "n_best" in err


def test_n_best_beyond_the_runs_beam_is_refused_before_loading(tmp_path, capsys):
    (tmp_path / "recipe.json").write_text("{not json")
    err = user_error(["translate", "--run-dir", str(tmp_path), "--n-best", "2"], capsys)
    assert "recipe.json is not a JSON object (invalid JSON at line 1" in err


def test_a_corrupt_export_record_is_named(export_dir, capsys):
    record = f"{export_dir}/assets.extra/record.json"
    with open(record, "wb") as file:
        file.write(b"\x00\xff")
    err = user_error(["translate", "--export", export_dir], capsys)
    assert record in err and "invalid UTF-8" in err


def _parse_error(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1, err
    return err


def test_wrong_kinds_of_paths_are_refused_when_parsed(tmp_path, capsys):
    regular = tmp_path / "file.txt"
    regular.write_text("x\n")
    for argv, words in (
        (["translate", "--export", str(tmp_path), "--input", str(tmp_path)], "--input"),
        (["average", "--run-dir", str(regular)], "not a file"),
        (["prepare", "--recipe", "demo", "--run-dir", str(regular)], "--run-dir"),
        (["translate", "--export", str(regular)], "SavedModel version folder"),
        (["evaluate", "--run-dir", str(tmp_path), "--weights", str(tmp_path)], "h5"),
        (
            ["translate", "--run-dir", str(tmp_path), "--output", str(tmp_path)],
            "folder",
        ),
    ):
        err = _parse_error(argv, capsys)
        assert words in err and "Traceback" not in err, err
    # A missing export is named when it is loaded, one line too.
    source = tmp_path / "in.txt"
    source.write_text("Hello\n")
    missing = str(tmp_path / "missing")
    for argv in (
        ["translate", "--export", missing, "--input", str(source)],
        ["parse", "--export", missing, "--input", str(source)],
    ):
        err = user_error(argv, capsys)
        assert missing in err and "missing" in err, err


def test_an_export_without_its_record_is_refused_naming_it(
    exported_run, tmp_path, capsys
):
    import shutil

    export = tmp_path / "1"
    shutil.copytree(exported_run / "export" / "1", export)
    (export / "assets.extra" / "record.json").unlink()
    source = tmp_path / "in.txt"
    source.write_text("Hello\n")
    err = user_error(
        ["translate", "--export", str(export), "--input", str(source)], capsys
    )
    # Its limits unknown: no search is run with the paper's beam on it.
    assert "record.json is missing" in err, err
