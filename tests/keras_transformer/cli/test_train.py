import importlib
import json
import shutil
import sys

import pytest

from keras_transformer import cli
from keras_transformer.cli.train import wait_until_prepared
from keras_transformer.cli.user_error import UserError
from keras_transformer.recipes import get_recipe
from tests.keras_transformer.cli.conftest import tiny_arguments
from tests.keras_transformer.training.workers import run_workers
from tests.markers import tensorflow_only

train_module = importlib.import_module("keras_transformer.cli.train")


def test_training_writes_checkpoints_with_records_and_a_backup(tiny_run):
    checkpoints = sorted(p.name for p in (tiny_run / "checkpoints").glob("*.h5"))
    assert checkpoints == [
        "ckpt-00000005.weights.h5",
        "ckpt-00000010.weights.h5",
        "ckpt-00000015.weights.h5",
    ]
    record = json.loads((tiny_run / "checkpoints" / "ckpt-00000015.json").read_text())
    assert record["step"] == 15 and record["recipe"] == "demo"
    assert record["replicas"] == 1 and record["strategy"] == "default"
    assert record["effective_batch_tokens"] == 512
    assert record["tokenizer_fingerprint"].startswith("sha256:")
    assert record["model_config"]["hidden_dim"] == 32
    assert json.loads((tiny_run / "backup" / "backup.json").read_text())["step"] == 15
    report = json.loads((tiny_run / "data" / "filter_report.json").read_text())
    assert report["total"] == 300 and 0 < report["kept"] <= 300
    assert list((tiny_run / "logs").iterdir())  # TensorBoard


def test_training_again_resumes_from_the_backup(tiny_run, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(tiny_run, run_dir)
    status = cli.main(
        ["train", "--recipe", "demo", "--run-dir", str(run_dir), "--train-steps", "20"]
        + tiny_arguments()
    )
    assert status == 0
    assert json.loads((run_dir / "backup" / "backup.json").read_text())["step"] == 20
    assert (run_dir / "checkpoints" / "ckpt-00000020.weights.h5").exists()


def test_a_run_directory_refuses_other_data_or_model_settings(tiny_run, capsys):
    status = cli.main(
        ["train", "--recipe", "demo", "--run-dir", str(tiny_run), "--train-steps", "1"]
        + tiny_arguments("model.d_model=64")
    )
    assert status == 2
    err = capsys.readouterr().err
    assert "model_overrides" in err and "use a new run directory" in err


def test_the_recipe_is_stored_with_its_overrides(tiny_run):
    stored = json.loads((tiny_run / "recipe.json").read_text())
    assert stored["model_overrides"]["d_model"] == 32
    assert stored["name"] == "demo" and stored["train_steps"] == 15
    assert get_recipe("demo").model_overrides != stored["model_overrides"]


@tensorflow_only("MultiWorkerMirroredStrategy belongs to the TensorFlow backend")
@pytest.mark.slow
def test_two_workers_train_one_shared_run_directory(tmp_path):
    """The README's multi-worker command: same command and run directory on
    every worker. The chief prepares while the other waits; the chief alone
    writes checkpoints and backup; both end at the same step."""
    run_dir = tmp_path / "run"
    argv = [
        "train",
        "--recipe",
        "demo",
        "--run-dir",
        str(run_dir),
        "--strategy",
        "multi_worker",
        "--train-steps",
        "5",
        *tiny_arguments(),
    ]
    main = "import sys; from keras_transformer import cli; sys.exit(cli.main())"
    outputs = run_workers(lambda index: [sys.executable, "-c", main, *argv])
    for returncode, stdout, stderr in outputs:
        assert returncode == 0, stderr[-3000:]
        assert f"Checkpoints: {run_dir / 'checkpoints'} (step 5)" in stdout
    assert "Training a 600-token" in outputs[0][1]  # the chief prepares
    assert "Training a 600-token" not in outputs[1][1]
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == [
        "ckpt-00000005.json",
        "ckpt-00000005.weights.h5",
    ]
    record = json.loads((run_dir / "checkpoints" / "ckpt-00000005.json").read_text())
    assert record["strategy"] == "multi_worker" and record["replicas"] == 2
    assert json.loads((run_dir / "backup" / "backup.json").read_text())["step"] == 5
    assert not list(run_dir.rglob("*partial*"))


def test_a_time_budget_is_refused_with_several_workers(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(train_module, "worker_count", lambda strategy=None: 2)
    status = cli.main(
        ["train", "--recipe", "demo", "--run-dir", str(tmp_path / "run")]
        + tiny_arguments("train_minutes=5")
    )
    assert status == 2
    assert "train_minutes=5" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()  # refused before preparing


def test_waiting_for_the_chief_times_out_with_a_hint(tmp_path):
    with pytest.raises(UserError, match="file system that all workers share"):
        wait_until_prepared(str(tmp_path), timeout_minutes=0.0, poll_seconds=0.01)
