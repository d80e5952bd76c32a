import gc
import subprocess
import sys

import pytest

from keras_transformer import cli
from keras_transformer.cli.startup import collector_after_imports
from tests.keras_transformer.cli.conftest import user_error

COMMANDS = (
    "demo",
    "recipes",
    "prepare",
    "train",
    "average",
    "evaluate",
    "translate",
    "export",
    "attention",
    "evalb",
)


def test_help_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for command in COMMANDS:
        assert command in out


@pytest.mark.parametrize("command", COMMANDS)
def test_every_subcommand_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main([command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: keras-transformer" in capsys.readouterr().out


def test_unknown_recipe_is_a_one_line_error(tmp_path, capsys):
    err = user_error(
        ["prepare", "--recipe", "wmt99", "--run-dir", str(tmp_path)], capsys
    )
    assert "recipe='wmt99'" in err and "wmt14_en_de_base" in err


def test_unknown_recipe_field_is_a_one_line_error(tmp_path, capsys):
    err = user_error(
        ["prepare", "--recipe", "demo", "--run-dir", str(tmp_path), "--set", "lr=3"],
        capsys,
    )
    assert "lr=3" in err


def test_malformed_set_is_a_one_line_error(tmp_path, capsys):
    err = user_error(
        ["prepare", "--recipe", "demo", "--run-dir", str(tmp_path), "--set", "x"],
        capsys,
    )
    assert "KEY=VALUE" in err


def test_bad_recipe_value_names_it(tmp_path, capsys):
    err = user_error(
        [
            "prepare",
            "--recipe",
            "demo",
            "--run-dir",
            str(tmp_path),
            "--set",
            "vocab_size=-5",
        ],
        capsys,
    )
    assert "vocab_size=-5" in err


@pytest.mark.parametrize("command", ["evaluate", "export", "average"])
def test_a_directory_without_a_run_is_a_one_line_error(command, tmp_path, capsys):
    err = user_error([command, "--run-dir", str(tmp_path)], capsys)
    assert "not a run directory" in err


def test_missing_input_file_is_a_one_line_error(tmp_path, capsys):
    err = user_error(
        ["translate", "--export", str(tmp_path), "--input", str(tmp_path / "no.txt")],
        capsys,
    )
    assert "no.txt" in err


def test_recipes_lists_the_paper_recipes_and_the_demo(capsys):
    assert cli.main(["recipes"]) == 0
    out = capsys.readouterr().out
    for name in ("wmt14_en_de_base", "wmt14_en_de_big", "wmt14_en_fr_big", "demo"):
        assert f"{name}:" in out
    assert cli.main(["recipes", "wmt14_en_fr_big"]) == 0
    assert '"dropout": 0.1' in capsys.readouterr().out


def test_recipes_shows_the_training_values_a_run_uses(capsys):
    import json

    assert cli.main(["recipes", "wmt14_en_de_table3_D4"]) == 0
    out = capsys.readouterr().out
    settings = json.loads(out[out.index("{") :])
    assert settings["training"] == {"train_steps": 100_000, "label_smoothing": 0.2}
    assert settings["decoding"]["beam_size"] == 4


_COLLECTOR_PROBE = """
import gc, sys
from keras_transformer.cli import main
code = main(["recipes"], owns_process=sys.argv[1] == "owned")
print(code, gc.isenabled(), gc.get_freeze_count())
"""


@pytest.mark.parametrize("owner", ["owned", "in-process"])
def test_a_process_the_command_line_owns_freezes_what_its_imports_made(owner):
    """`main(owns_process=True)` (the console script, `run`) leaves the
    objects of TensorFlow's import out of the collector's work and turns the
    collector back on; by default `main` changes nothing in the process."""
    done = subprocess.run(
        [sys.executable, "-c", _COLLECTOR_PROBE, owner],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    code, enabled, frozen = done.stdout.split()[-3:]
    assert (code, enabled) == ("0", "True")
    if owner == "owned":
        assert int(frozen) > 100_000  # TensorFlow's modules, functions, classes
    else:
        assert frozen == "0"


def test_the_collector_is_left_as_it_was_found():
    # A program that keeps the collector off keeps it off; in-process, so the
    # freeze is undone.
    gc.disable()
    try:
        with collector_after_imports():
            assert not gc.isenabled()
        assert not gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.enable()
