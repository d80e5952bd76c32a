import json
import os

import pipelines
from keras_transformer import cli
from keras_transformer.training import read_learning_curve
from tests.keras_transformer.cli.conftest import tiny_arguments


def test_demo_runs_the_life_cycle_and_reports(tmp_path, capsys):
    """The demo's steps with the tiny recipe; the real run is in the README."""
    output = tmp_path / "demo"
    argv = ["demo", "--updates", "10", "--output", str(output), "--dev-sentences", "8"]
    argv += ["--test-sentences", "4", "--examples", "2", *tiny_arguments()]
    assert cli.main(argv) == 0
    report = json.loads((output / "report.json").read_text())
    # A budget in updates: exactly that many, whatever the machine's speed.
    assert report["steps"] == 10 and report["train_steps"] == 10
    assert report["train_minutes"] is None
    assert report["test_sentences"] == 4
    assert report["bleu_signature"].startswith("nrefs:1")
    assert os.path.isdir(report["export"])
    assert report["export"] == str(output / "export" / "1")
    assert (output / "checkpoints").is_dir() and os.path.exists(
        report["averaged_weights"]
    )
    assert len(report["examples"]) == 2
    for example in report["examples"]:
        assert set(example) == {"source", "reference", "translation"}
    phases = report["phase_seconds"]
    assert set(phases) == {
        "prepare",
        "train",
        "average",
        "evaluate",
        "export",
        "reload and run the export",
        "pictures",
    }
    assert all(seconds >= 0 for seconds in phases.values())
    assert sum(phases.values()) <= report["wall_seconds"] + 0.5
    # The learning curve: a row per checkpoint (every 5 updates), with the
    # greedy dev BLEU; both pictures are PNG files.
    rows = read_learning_curve(str(output / "learning_curve.jsonl"))
    assert [row["step"] for row in rows] == [5, 10]
    assert all(0.0 <= row["dev_bleu"] <= 100.0 for row in rows)
    assert report["pictures"] == {
        "learning_curve": str(output / "learning_curve.png"),
        "attention": str(output / "attention.png"),
    }
    for path in report["pictures"].values():
        with open(path, "rb") as file:
            assert file.read(4) == b"\x89PNG"
    out = capsys.readouterr().out
    # The progress bar over the run's updates, then the closing table.
    assert "10/10" in out and "Epoch 1/" not in out
    assert "Expected training time" not in out  # fewer updates than measured
    assert "BLEU" in out and report["bleu_signature"] in out
    assert report["precision"] == "float32"  # tiny_arguments' ("auto" resolved)
    assert "train (10 updates, float32)" in out and "total" in out
    assert f"Wrote {output}/:" in out and str(output / "learning_curve.png") in out


def test_parsing_demo_reports_f1_beside_the_baselines(tmp_path, capsys):
    from tests.keras_transformer.cli.conftest import TINY_PARSER

    output = tmp_path / "parsing"
    argv = ["demo", "--task", "parsing", "--minutes", "0.05", "--output", str(output)]
    argv += ["--quiet", "--test-sentences", "4", "--examples", "2"]
    argv += [item for pair in TINY_PARSER for item in ("--set", pair)]
    # A run shorter than one checkpoint interval (the checkpoint is the last
    # update's): its curve is the training loss alone.
    argv += ["--set", "checkpoint_every_steps=100000"]
    assert cli.main(argv) == 0
    report = json.loads((output / "report.json").read_text())
    assert report["task"] == "parsing" and report["test_sentences"] == 4
    # --minutes: the clock bounds training, not the recipe's updates.
    assert report["train_minutes"] == 0.05 and report["steps"] >= 5
    assert set(report["pictures"]) == {"learning_curve"}
    with open(report["pictures"]["learning_curve"], "rb") as file:
        assert file.read(4) == b"\x89PNG"
    # Rows every 5 updates (steps_per_epoch) and at the last one, no dev F1.
    rows = read_learning_curve(str(output / "learning_curve.jsonl"))
    steps = [row["step"] for row in rows]
    assert steps[-1] == report["steps"] and steps[:-1] == list(range(5, steps[-1], 5))
    assert not any("dev_f1" in row for row in rows)
    assert report["recipe"]["name"] == "gum_parsing"
    assert 0.0 <= report["f1"] <= 100.0
    # The recipe predicts tags: F1 with them and the tagging accuracy too.
    assert 0.0 <= report["f1_predicted_tags"] <= 100.0
    assert 0.0 <= report["tagging_accuracy"] <= 100.0
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
    assert "flat F1" in out and "silver trees" in out and "F1, predicted tags" in out


def test_a_demo_of_other_settings_starts_afresh_with_a_notice(tmp_path, capsys):
    from keras_transformer.recipes import get_recipe
    from keras_transformer.runs import RunDirectory
    from keras_transformer.workflows.demo import _start_afresh_if_older

    demo = tmp_path / "demo"
    RunDirectory(str(demo)).write_recipe(get_recipe("demo", min_bucket_length=8))
    (demo / "checkpoints").mkdir()
    _start_afresh_if_older(get_recipe("demo"), str(demo), verbose=1)
    assert not demo.exists()
    out = capsys.readouterr().out
    assert "min_bucket_length=8 -> 2" in out and "starting the demo afresh" in out
    # The same settings, or a user's run of another recipe: left as they are.
    for recipe in (get_recipe("demo"), get_recipe("wmt14_en_de_base")):
        run = tmp_path / recipe.name
        RunDirectory(str(run)).write_recipe(recipe)
        _start_afresh_if_older(get_recipe("demo"), str(run), verbose=1)
        assert (run / "recipe.json").exists()
