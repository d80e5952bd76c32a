import json
import os

import pipelines
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


def test_parsing_demo_reports_f1_beside_the_baselines(tmp_path, capsys):
    from tests.keras_transformer.cli.test_parsing import TINY_PARSER

    output = tmp_path / "parsing"
    argv = ["demo", "--task", "parsing", "--minutes", "0.05", "--output", str(output)]
    argv += ["--quiet", "--test-sentences", "4", "--examples", "2"]
    argv += [item for pair in TINY_PARSER for item in ("--set", pair)]
    assert cli.main(argv) == 0
    report = json.loads((output / "report.json").read_text())
    assert report["task"] == "parsing" and report["test_sentences"] == 4
    assert report["recipe"]["name"] == "gum_parsing"
    assert 0.0 <= report["f1"] <= 100.0
    # The baselines of the same 4 test trees, by the same scorer.
    assert set(report["baselines"]) == {"flat", "right_branching"}
    for scores in report["baselines"].values():
        assert 0.0 < scores["f1"] < 100.0 and scores["error_sentences"] == 0
    assert len(report["examples"]) == 2
    for example in report["examples"]:
        # The export's tree is over the sentence's words, in order.
        tree = pipelines.parse_tree(example["tree"])
        assert " ".join(tree.words()) == example["sentence"]
    out = capsys.readouterr().out
    assert '"flat_f1"' in out and "silver trees" in out
