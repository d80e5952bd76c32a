import json
import os

from keras_transformer import cli
from tests.keras_transformer.cli.conftest import tiny_arguments


def test_demo_runs_the_life_cycle_and_reports(tmp_path, capsys):
    """The demo's steps with the tiny recipe; the real run is in the README."""
    output = tmp_path / "demo"
    argv = ["demo", "--minutes", "0.1", "--output", str(output), "--quiet"]
    argv += ["--test-sentences", "4", "--examples", "2", *tiny_arguments()]
    assert cli.main(argv) == 0
    report = json.loads((output / "report.json").read_text())
    assert report["test_sentences"] == 4 and report["steps"] >= 5
    assert report["bleu_signature"].startswith("nrefs:1")
    assert report["train_minutes"] == 0.1
    assert os.path.isdir(report["export"])
    assert report["export"] == str(output / "export" / "1")
    assert (output / "checkpoints").is_dir() and os.path.exists(
        report["averaged_weights"]
    )
    assert len(report["examples"]) == 2
    for example in report["examples"]:
        assert set(example) == {"source", "reference", "translation"}
    out = capsys.readouterr().out
    assert "sacreBLEU signatures: BLEU nrefs:1" in out and f"Wrote {output}/" in out
