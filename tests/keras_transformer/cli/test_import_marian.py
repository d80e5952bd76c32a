"""`keras-transformer import-marian`: a Hugging Face Marian folder becomes a
run that `translate` and `evaluate` use as a trained one; bad folders and
fine-tuning are refused in one line (exit 2)."""

import importlib.util
import json
import os

import pytest

if not all(importlib.util.find_spec(name) for name in ("torch", "transformers")):
    pytest.skip("the reference needs torch and transformers", allow_module_level=True)

from keras_transformer import cli  # noqa: E402
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


def test_evaluate_scores_the_test_files_given_to_the_import(marian_run, capsys):
    assert cli.main(["evaluate", "--run-dir", marian_run["run"]]) == 0
    scores = json.load(open(os.path.join(marian_run["run"], "eval", "test.json")))
    assert 0.0 <= scores["bleu"] <= 100.0


def test_fine_tuning_an_imported_run_is_refused(marian_run, capsys):
    line = user_error(["train", "--run-dir", marian_run["run"]], capsys)
    assert "not supported yet" in line


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
