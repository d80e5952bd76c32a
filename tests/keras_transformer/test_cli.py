import json

import pytest

from keras_transformer import cli


def test_help_lists_the_demo(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--help"])
    assert exit_info.value.code == 0
    assert "demo" in capsys.readouterr().out


def test_demo_writes_model_and_report(tmp_path, capsys):
    status = cli.main(
        [
            "demo",
            "--epochs",
            "1",
            "--train-examples",
            "256",
            "--quiet",
            "--output",
            str(tmp_path),
        ]
    )
    assert status == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert 0.0 <= report["exact_match"] <= 1.0 and report["parameters"] > 0
    assert (tmp_path / "model.keras").exists()
    assert "greedy output" in capsys.readouterr().out


def test_demo_fails_below_the_required_accuracy(tmp_path):
    status = cli.main(
        [
            "demo",
            "--epochs",
            "1",
            "--train-examples",
            "64",
            "--quiet",
            "--min-exact-match",
            "1.01",
        ]
    )
    assert status == 1


def test_unknown_command_exits_with_usage_error():
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["fly"])
    assert exit_info.value.code == 2
