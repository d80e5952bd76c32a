"""average -> evaluate -> export -> translate on a copy of the shared tiny run."""

import json

import h5py
import numpy as np
import sacrebleu

import savedmodels.export
from keras_transformer import cli
from keras_transformer.recipes import Recipe
from keras_transformer.runs.run_data import read_texts
from tests.keras_transformer.cli.conftest import copy_run


def _weights(path):
    values = {}

    def keep(name, item):
        if isinstance(item, h5py.Dataset):
            values[name] = item[()]

    with h5py.File(path, "r") as f:
        f["layers"].visititems(keep)
    return values


def test_average_evaluate_export_translate(tiny_run, tmp_path, capsys, monkeypatch):
    # A copy: the shared tiny run stays as trained (cli/conftest.py).
    run_dir = copy_run(tiny_run, tmp_path / "run")
    run = str(run_dir)
    # average: the mean of the last two checkpoints, with a record.
    assert cli.main(["average", "--run-dir", run, "--last", "2"]) == 0
    (averaged,) = (run_dir / "averaged").glob("*.weights.h5")
    assert averaged.name == "avg-00000010-00000015-n2.weights.h5"
    first = _weights(run_dir / "checkpoints" / "ckpt-00000010.weights.h5")
    second = _weights(run_dir / "checkpoints" / "ckpt-00000015.weights.h5")
    mean = _weights(averaged)
    assert mean.keys() == first.keys() and len(mean) > 5
    for name, value in mean.items():
        if value.dtype.kind == "f":
            np.testing.assert_allclose(value, (first[name] + second[name]) / 2, 1e-6)
    record = json.loads(averaged.with_suffix("").with_suffix(".json").read_text())
    assert record["averaged_steps"] == [10, 15]
    assert cli.main(["average", "--run-dir", run, "--last", "2"]) == 0  # idempotent

    # evaluate: sacreBLEU with its signature, the hypotheses written.
    assert (
        cli.main(["evaluate", "--run-dir", run, "--limit", "6", "--method", "greedy"])
        == 0
    )
    assert "sacreBLEU BLEU" in capsys.readouterr().out
    scores = json.loads((run_dir / "eval" / "all.json").read_text())
    assert scores["sentences"] == 6 and scores["weights"] == str(averaged)
    assert scores["bleu_signature"].startswith("nrefs:1")
    hypotheses = (run_dir / "eval" / "all.txt").read_text().split("\n")[:-1]
    recipe = Recipe.from_dict(json.loads((run_dir / "recipe.json").read_text()))
    _, references = read_texts(recipe, "all", limit=6)
    bleu = sacrebleu.corpus_bleu(hypotheses, [references]).score
    assert abs(bleu - scores["bleu"]) < 1e-9

    # export: a SavedModel version whose record names the averaged weights.
    # --tf-text-version reaches the op check: an old target refuses the
    # tensorflow-text ops, `none` skips the check.
    assert cli.main(["export", "--run-dir", run, "--tf-text-version", "1.15"]) == 2
    assert "after the target 1.15" in capsys.readouterr().err

    def no_check(*args, **kwargs):
        raise AssertionError("--tf-text-version none must skip the op check")

    monkeypatch.setattr(savedmodels.export, "check_serving_ops", no_check)
    assert cli.main(["export", "--run-dir", run, "--tf-text-version", "none"]) == 0
    monkeypatch.undo()
    export = run_dir / "export" / "1"
    assert (export / "saved_model.pb").exists()
    exported = json.loads((export / "assets.extra" / "record.json").read_text())
    assert exported["record"]["averaged_steps"] == [10, 15]
    assert exported["record"]["evaluation"]["bleu"] == scores["bleu"]
    assert cli.main(["export", "--run-dir", run, "--version", "1"]) == 2
    assert "overwrite" in capsys.readouterr().err

    # translate: the export and the run's weights give the same lines.
    source = tmp_path / "input.txt"
    # The third line is longer than the recipe's training length (96
    # positions): both paths cut it the same way (`encode_sources`).
    long_line = " ".join(["Select a cell and click OK."] * 40)
    source.write_text(f"Click OK.\n\nSelect a cell.\n{long_line}\n")
    outputs = {}
    # The run in float32, the export's dtype (the command's `auto` decodes in
    # bfloat16 on a CPU with bfloat16 matmuls).
    where = {
        "--export": [str(export)],
        "--run-dir": [str(run), "--compute-dtype", "float32"],
    }
    for flag, location in where.items():
        capsys.readouterr()
        argv = ["translate", flag, *location, "--input", str(source)]
        assert cli.main(argv + ["--beam-size", "2", "--n-best", "2"]) == 0
        outputs[flag] = capsys.readouterr().out.splitlines()
    # Same search, same weights: the same n-best texts; scores to float noise.
    exported, in_process = (
        [line.split(" ||| ") for line in outputs[flag]] for flag in outputs
    )
    assert [row[:2] for row in exported] == [row[:2] for row in in_process]
    np.testing.assert_allclose(
        [float(row[2]) for row in exported],
        [float(row[2]) for row in in_process],
        atol=2e-4,
    )
    lines = outputs["--export"]
    assert [line.split(" ||| ")[0] for line in lines] == [
        str(i) for i in range(4) for _ in range(2)
    ]
    assert lines[2:4] == ["1 |||  ||| 0.0000"] * 2  # empty line -> empty output
    scores = [float(line.split(" ||| ")[2]) for line in lines[:2]]
    assert scores[0] >= scores[1]


def test_weights_of_another_model_are_refused(tiny_run, tmp_path, capsys):
    other = tmp_path / "other.weights.h5"
    import keras

    keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)]).save_weights(other)
    status = cli.main(["evaluate", "--run-dir", str(tiny_run), "--weights", str(other)])
    assert status == 2
    err = capsys.readouterr().err
    assert "does not fit" in err and "Traceback" not in err


def test_attention_picture_of_a_trained_run(tiny_run, tmp_path, capsys):
    png = tmp_path / "cross.png"
    argv = ["attention", "--run-dir", str(tiny_run), "--sentence", "Click OK."]
    assert cli.main(argv + ["--png", str(png), "--heads", "0", "1"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from keras_transformer.translation.attention_plot import attention

    _, plotted = attention(
        str(tiny_run), "Click OK.", str(tmp_path / "e.png"), kind="encoder", verbose=0
    )
    assert plotted.shape[0] == 2 and plotted.shape[1] == plotted.shape[2]
    np.testing.assert_allclose(plotted.sum(-1), 1.0, atol=1e-5)
    status = cli.main(argv + ["--png", str(png), "--layer", "5"])
    assert status == 2 and "layer=5" in capsys.readouterr().err
