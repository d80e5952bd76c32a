"""Corrupt files of a run or an export: the command stops and names them."""

import os
import shutil

import pytest

from keras_transformer import cli
from tests.keras_transformer.cli.conftest import copy_run, user_error


def _newest_checkpoint(run_dir):
    return sorted((run_dir / "checkpoints").glob("ckpt-*.weights.h5"))[-1]


@pytest.mark.parametrize("damage", ["truncated", "binary", "empty"])
@pytest.mark.parametrize("command", ["average", "evaluate"])
def test_a_corrupt_newest_checkpoint_stops_and_says_how_to_leave_it_out(
    tiny_run, tmp_path, capsys, command, damage
):
    run_dir = copy_run(tiny_run, tmp_path / "run")
    newest = _newest_checkpoint(run_dir)
    data = newest.read_bytes()
    newest.write_bytes(
        {"truncated": data[: len(data) // 3], "binary": b"\x89HDF\x00" * 9}.get(
            damage, b""
        )
    )
    err = user_error([command, "--run-dir", str(run_dir)], capsys)
    assert str(newest) in err and "move it and its .json record out of" in err
    assert not (run_dir / "averaged").exists()  # nothing averaged without it
    # Moved away as the message says, the others are used.
    os.replace(newest, tmp_path / newest.name)
    os.remove(str(newest).replace(".weights.h5", ".json"))
    if command == "average":
        assert cli.main(["average", "--run-dir", str(run_dir)]) == 0


@pytest.mark.parametrize(
    "name, content, words",
    [
        ("recipe.json", b"\xff\xfe", "invalid UTF-8"),
        ("recipe.json", b'{"preset": ', "invalid JSON"),
        ("recipe.json", b'{"vocab_size": "x"}', "a recipe this version can read"),
        ("checkpoints/ckpt-00000015.json", b"{", "invalid JSON"),
        ("tokenizer.model", b"not a model", "is not a tokenizer model"),
    ],
)
def test_a_corrupt_run_file_is_named(tiny_run, tmp_path, capsys, name, content, words):
    run_dir = copy_run(tiny_run, tmp_path / "run")
    (run_dir / name).write_bytes(content)
    err = user_error(["export", "--run-dir", str(run_dir)], capsys)
    assert str(run_dir / name) in err and words in err


def test_a_corrupt_backup_is_named_and_says_what_to_do(tiny_run, tmp_path, capsys):
    from keras_transformer.training import TrainingBackup

    run_dir = copy_run(tiny_run, tmp_path / "run")
    (weights,) = (run_dir / "backup").glob("backup-*.weights.h5")
    weights.write_bytes(weights.read_bytes()[:1000])
    with pytest.raises(ValueError, match="truncated file") as info:
        TrainingBackup(str(run_dir / "backup")).restore(None)
    assert str(weights) in str(info.value) and "to train again from step 0" in str(
        info.value
    )
    (run_dir / "backup" / "backup.json").write_text('{"epoch": "x"}')
    with pytest.raises(ValueError, match="epoch='x'"):
        TrainingBackup(str(run_dir / "backup")).restore(None)


def test_a_truncated_savedmodel_is_a_one_line_error(exported_run, tmp_path, capsys):
    export = tmp_path / "1"
    shutil.copytree(exported_run / "export" / "1", export)
    (data,) = (export / "variables").glob("variables.data-*")
    data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
    source = tmp_path / "in.txt"
    source.write_text("Hello.\n")
    err = user_error(
        ["translate", "--export", str(export), "--input", str(source)], capsys
    )
    assert str(data) in err and "not a loadable SavedModel" in err
    os.remove(export / "saved_model.pb")
    err = user_error(
        ["translate", "--export", str(export), "--input", str(source)], capsys
    )
    assert "saved_model.pb" in err
