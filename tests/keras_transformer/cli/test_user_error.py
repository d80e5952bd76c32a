"""The one error path: exception -> one line and an exit status."""

import errno
import importlib
import io
import json

import pytest

from keras_transformer import cli
from keras_transformer.cli.error_report import UserError, describe_error, report_error
from keras_transformer.training.corrupt_file_error import CorruptFileError

commands_module = importlib.import_module("keras_transformer.cli.training_commands")


@pytest.mark.parametrize(
    "error, words",
    [
        (UserError("No such input file: x.txt"), "x.txt"),
        (ValueError("expected a positive integer. Received: k=0"), "k=0"),
        (CorruptFileError("r/recipe.json", "a JSON object", "bad"), "recipe.json"),
        (FileNotFoundError(errno.ENOENT, "No such file", "a.tsv"), "a.tsv"),
        (IsADirectoryError(errno.EISDIR, "Is a directory", "d"), "Is a directory"),
        (OSError(errno.ENOSPC, "No space left on device", "f.h5"), "disk is full"),
        (OSError("Unable to create file (errno = 28, ...)"), "disk is full"),
    ],
)
def test_user_errors_are_one_line_with_status_2(error, words):
    stream = io.StringIO()
    assert report_error(error, "average", stream=stream) == 2
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1 and words in lines[0]
    assert lines[0].startswith("keras-transformer average: error: ")


def test_a_multi_line_message_becomes_one_line():
    stream = io.StringIO()
    report_error(ValueError("first\nsecond\n"), "export", stream=stream)
    assert stream.getvalue() == "keras-transformer export: error: first second\n"


def test_an_internal_error_names_its_traceback_in_the_run_directory(tmp_path):
    (tmp_path / "recipe.json").write_text("{}")
    stream = io.StringIO()
    try:
        raise RuntimeError("unexpected")
    except RuntimeError as error:
        status = report_error(error, "train", run_dir=str(tmp_path), stream=stream)
    assert status == 1
    line = stream.getvalue().strip()
    assert len(line.splitlines()) == 1 and "internal error (RuntimeError" in line
    (log,) = (tmp_path / "logs").glob("traceback-*.txt")
    assert str(log) in line
    assert "Traceback" in log.read_text() and "unexpected" in log.read_text()


def test_an_internal_error_without_a_run_goes_to_a_temporary_file(tmp_path):
    stream = io.StringIO()
    status = report_error(
        KeyError("k"), "recipes", run_dir=str(tmp_path), stream=stream
    )
    assert status == 1
    path = stream.getvalue().split("The full traceback is in ")[1].rstrip(".\n")
    assert not list(tmp_path.iterdir())  # not a run: nothing written there
    assert "KeyError" in open(path).read()


def test_interrupt_says_how_to_go_on():
    assert describe_error(KeyboardInterrupt(), "train")[1] == 130
    assert ".partial" in describe_error(KeyboardInterrupt(), "translate")[0]


def _failing(error):
    def handler(args):
        raise error

    return handler


def test_main_maps_every_error_and_debug_shows_the_traceback(monkeypatch, capsys):
    monkeypatch.setattr(commands_module, "_recipes", _failing(IndexError("boom")))
    assert cli.main(["recipes"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error (IndexError: boom)" in err
    assert cli.main(["--debug", "recipes"]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert err.strip().splitlines()[-1].startswith("keras-transformer recipes: error")


def test_main_reports_a_corrupt_json_error_naming_the_file(monkeypatch, capsys):
    error = json.JSONDecodeError("Expecting value", "", 0)
    monkeypatch.setattr(commands_module, "_recipes", _failing(error))
    assert cli.main(["recipes"]) == 2  # a ValueError: the user's file
