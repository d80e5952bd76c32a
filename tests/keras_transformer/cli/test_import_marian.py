"""`keras-transformer import-marian`: a Hugging Face Marian folder becomes a
run that `translate` and `evaluate` use as a trained one and `train --train`
fine-tunes; bad folders are refused in one line (exit 2)."""

import importlib.util
import json
import os

import h5py
import numpy as np
import pytest

if not all(importlib.util.find_spec(name) for name in ("torch", "transformers")):
    pytest.skip("the reference needs torch and transformers", allow_module_level=True)

from keras_transformer import cli  # noqa: E402
from keras_transformer.runs.run_directory import RunDirectory  # noqa: E402
from tests.keras_transformer.cli.conftest import user_error  # noqa: E402
from tests.marian_reference import (  # noqa: E402
    corpus_pairs,
    sample_sentences,
    shared_reference,
)


@pytest.fixture(scope="module")
def marian_run(tmp_path_factory):
    """The shared Marian folder imported with test files."""
    root = tmp_path_factory.mktemp("marian_cli")
    folder, _ = shared_reference(tmp_path_factory)
    pairs = corpus_pairs("test", 20)
    (root / "test.en").write_text("".join(f"{s}\n" for s, _ in pairs))
    (root / "test.de").write_text("".join(f"{t}\n" for _, t in pairs))
    run = str(root / "run")
    status = cli.main(
        [
            "import-marian",
            folder,
            "--run-dir",
            run,
            "--test",
            str(root / "test.en"),
            str(root / "test.de"),
            "--dev",
            str(root / "test.en"),
            str(root / "test.de"),
            "--target-language",
            "de",
        ]
    )
    assert status == 0
    return {"folder": folder, "run": run, "root": root}


def test_translate_reads_an_imported_run(marian_run, tmp_path):
    lines = sample_sentences(5)
    source = tmp_path / "in.txt"
    source.write_text("".join(f"{line}\n" for line in lines))
    output = tmp_path / "out.txt"
    argv = ["translate", "--run-dir", marian_run["run"], "--input", str(source)]
    assert cli.main([*argv, "--output", str(output)]) == 0
    translations = output.read_text().splitlines()
    assert len(translations) == len(lines)
    assert translations[-1] == ""  # the empty line


def test_evaluate_scores_the_files_given_to_the_import(marian_run, capsys):
    assert cli.main(["evaluate", "--run-dir", marian_run["run"]]) == 0
    scores = json.load(open(os.path.join(marian_run["run"], "eval", "test.json")))
    assert 0.0 <= scores["bleu"] <= 100.0
    # the dev files by the name `prepare --dev` gives them
    assert cli.main(["evaluate", "--run-dir", marian_run["run"], "--split", "dev"]) == 0
    dev = json.load(open(os.path.join(marian_run["run"], "eval", "dev.json")))
    assert dev["bleu"] == scores["bleu"]  # the same files


def test_train_without_data_names_the_fine_tuning_command(marian_run, capsys):
    line = user_error(["train", "--run-dir", marian_run["run"]], capsys)
    assert "fine-tune it with `train --run-dir RUN --train SOURCE TARGET`" in line


def test_train_fine_tunes_an_imported_run(marian_run, tmp_path, capsys):
    """`train --train` on an imported run: it takes the data and training
    settings, keeps the model, tokenizer and test files, and trains from the
    imported weights; a model field is still refused."""
    run = str(tmp_path / "run")
    test = [str(marian_run["root"] / "test.en"), str(marian_run["root"] / "test.de")]
    assert (
        cli.main(
            ["import-marian", marian_run["folder"], "--run-dir", run, "--test", *test]
        )
        == 0
    )
    pairs = corpus_pairs("train", 64)
    (tmp_path / "train.tsv").write_text("".join(f"{s}\t{t}\n" for s, t in pairs))
    argv = ["train", "--run-dir", run, "--train", str(tmp_path / "train.tsv")]
    imported = RunDirectory(run).read_recipe()
    line = user_error([*argv, "--set", "vocab_size=100"], capsys)
    assert f"vocab_size={imported.vocab_size} -> 100" in line
    assert "keeps its model and tokenizer" in line
    assert not os.path.exists(os.path.join(run, "data"))  # refused before any work
    small = ["--set", "steps_per_epoch=2", "--set", "tokens_per_batch=256"]
    small += ["--set", "max_tokens_per_replica=256", "--set", "max_train_length=64"]
    small += ["--set", "learning_rate_scale=1"]
    assert cli.main([*argv, "--train-steps", "2", *small]) == 0
    assert "Fine-tuning the imported weights" in capsys.readouterr().out
    tuned = RunDirectory(run)
    recipe = tuned.read_recipe()
    assert recipe.data_source == "files" and recipe.learning_rate_scale == 1.0
    for field in ("model_overrides", "tokenizer", "vocab_size", "test_files"):
        assert getattr(recipe, field) == getattr(imported, field), field
    (checkpoint,) = tuned.checkpoints()
    assert checkpoint.endswith("ckpt-00000002.weights.h5")
    before, after = _weights(tuned.imported_weights), _weights(checkpoint)
    assert set(before) <= set(after)  # the checkpoint adds the optimizer's
    changed = [k for k in before if not np.array_equal(before[k], after[k])]
    # Trained from the imported weights: moved a little, not re-initialized.
    assert changed and all(np.abs(before[k] - after[k]).max() < 0.05 for k in before)
    # every command now takes the fine-tuned checkpoint
    (tmp_path / "in.txt").write_text("Open the file.\n\n")
    output = tmp_path / "out.txt"
    argv = ["translate", "--run-dir", run, "--input", str(tmp_path / "in.txt")]
    assert cli.main([*argv, "--output", str(output)]) == 0
    assert len(output.read_text().splitlines()) == 2


def test_a_missing_folder_is_one_line(tmp_path, capsys):
    argv = ["import-marian", str(tmp_path / "nowhere"), "--run-dir", str(tmp_path)]
    assert "No such Hugging Face model folder" in user_error(argv, capsys)


def test_a_folder_of_another_model_is_refused_naming_the_field(
    marian_run, tmp_path, capsys
):
    folder = tmp_path / "hf"
    folder.mkdir()
    for name in os.listdir(marian_run["folder"]):
        if name != "config.json":
            os.symlink(os.path.join(marian_run["folder"], name), folder / name)
    config = json.load(open(os.path.join(marian_run["folder"], "config.json")))
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "bart"}))
    argv = ["import-marian", str(folder), "--run-dir", str(tmp_path / "run")]
    assert "model_type='bart'" in user_error(argv, capsys)


def _weights(path):
    """`{dataset name: array}` of a `.weights.h5` file."""
    arrays = {}
    with h5py.File(path, "r") as file:
        file.visititems(
            lambda name, item: (
                arrays.__setitem__(name, item[()])
                if isinstance(item, h5py.Dataset)
                else None
            )
        )
    return arrays
