import importlib
import json
import shutil
import sys

import pytest

from keras_transformer import cli
from keras_transformer.recipes import get_recipe
from keras_transformer.runs.train import wait_until_prepared
from keras_transformer.runs.user_error import UserError
from tests.keras_transformer.cli.conftest import tiny_arguments, user_error
from tests.keras_transformer.training.workers import run_workers
from tests.markers import tensorflow_only

train_module = importlib.import_module("keras_transformer.runs.train")


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
    assert "model_overrides" in err and "give a new --run-dir" in err


def test_train_continues_a_run_from_its_directory_alone(tiny_run, tmp_path, capsys):
    run_dir = tmp_path / "run"
    shutil.copytree(tiny_run, run_dir)
    # No --recipe and none of the tiny run's --set: its recipe.json holds them.
    argv = ["train", "--run-dir", str(run_dir), "--train-steps", "20"]
    assert cli.main(argv) == 0
    assert "train_steps 15 -> 20 (recorded in recipe.json)" in capsys.readouterr().out
    assert json.loads((run_dir / "backup" / "backup.json").read_text())["step"] == 20
    stored = json.loads((run_dir / "recipe.json").read_text())
    assert stored["train_steps"] == 20 and stored["model_overrides"]["d_model"] == 32
    # The recipe's name and a setting the run has are accepted again.
    argv += ["--recipe", "demo", "--set", "vocab_size=600"]
    assert cli.main(argv) == 0


def test_a_changed_setting_of_a_run_names_each_difference(tiny_run, capsys):
    argv = ["train", "--run-dir", str(tiny_run), "--set", "model.d_model=64"]
    err = user_error(argv + ["--set", "vocab_size=300"], capsys)
    assert "vocab_size=600 -> 300" in err and "'d_model': 64" in err
    assert "give a new --run-dir" in err and "train_steps" in err
    err = user_error(["train", "--run-dir", str(tiny_run), "--recipe", "base"], capsys)
    assert "recipe 'demo', not 'base'" in err


def test_a_new_run_directory_needs_a_recipe(tmp_path, capsys):
    for command in ("train", "prepare"):
        err = user_error([command, "--run-dir", str(tmp_path / "new")], capsys)
        assert "new run directory" in err and "give --recipe" in err
    assert not (tmp_path / "new").exists()


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


def _float_dtypes(weights_file):
    import h5py

    dtypes = set()
    with h5py.File(weights_file, "r") as file:
        file.visititems(
            lambda name, item: (
                dtypes.add(str(item.dtype))
                if isinstance(item, h5py.Dataset) and item.dtype.kind == "f"
                else None
            )
        )
    return dtypes


def test_a_run_resumes_across_precisions_and_stays_float32(
    tiny_run, tmp_path, capsys, monkeypatch
):
    """float32 (15 updates) -> mixed_float16 (20) -> auto on a CPU with
    bfloat16 matmuls, so mixed_bfloat16 (25): the step continues across each
    change (loss scaling on, then off), every checkpoint's record names the
    precision it trained in, recipe.json keeps "auto", the variables stay
    float32 and the checkpoints of all three average."""
    monkeypatch.setattr(
        "keras_transformer.precisions.cpu_has_bfloat16_matmuls", lambda *_: True
    )
    monkeypatch.setattr("keras_transformer.runs.train.has_accelerator", lambda: False)
    run_dir = tmp_path / "run"
    shutil.copytree(tiny_run, run_dir)
    legs = (("mixed_float16", "mixed_float16", "20"), ("auto", "mixed_bfloat16", "25"))
    for option, precision, steps in legs:
        status = cli.main(
            ["train", "--recipe", "demo", "--run-dir", str(run_dir)]
            + ["--train-steps", steps, "--precision", option]
            + tiny_arguments()
        )
        assert status == 0
        out = capsys.readouterr().out
        assert "step and moments carry over" in out
        assert f"1 replica(s), {precision}" in out
        state = json.loads((run_dir / "backup" / "backup.json").read_text())
        assert state["step"] == int(steps)
        record = json.loads(
            (run_dir / "checkpoints" / f"ckpt-000000{steps}.json").read_text()
        )
        assert record["precision"] == precision
        weights = run_dir / "checkpoints" / f"ckpt-000000{steps}.weights.h5"
        assert _float_dtypes(weights) == {"float32"}
    stored = json.loads((run_dir / "recipe.json").read_text())
    assert stored["precision"] == "auto"
    assert cli.main(["average", "--run-dir", str(run_dir)]) == 0
    (averaged,) = (run_dir / "averaged").glob("*.weights.h5")
    assert _float_dtypes(averaged) == {"float32"}


@tensorflow_only("the GPU check asks TensorFlow for devices")
def test_mixed_float16_on_a_cpu_says_it_will_be_slow(tiny_run, tmp_path, capsys):
    from keras_transformer.training import has_accelerator

    if has_accelerator():
        pytest.skip("this machine has a GPU or TPU")
    run_dir = tmp_path / "run"
    shutil.copytree(tiny_run, run_dir)
    status = cli.main(
        ["train", "--recipe", "demo", "--run-dir", str(run_dir)]
        + ["--train-steps", "15", "--precision", "mixed_float16"]
        + tiny_arguments()
    )
    assert status == 0
    lines = [
        line for line in capsys.readouterr().out.splitlines() if "without a GPU" in line
    ]
    assert lines == [
        "Precision mixed_float16 on a machine without a GPU: float16 matmuls "
        "are slow on CPUs; mixed_bfloat16 suits CPUs with AVX-512 BF16 or AMX."
    ]


def test_pure_float16_is_refused_naming_the_choices(tmp_path, capsys):
    from tests.keras_transformer.cli.conftest import user_error

    with pytest.raises(SystemExit) as exit_info:  # argparse's choices
        cli.main(
            ["train", "--recipe", "demo", "--run-dir", str(tmp_path / "r")]
            + ["--precision", "float16"]
        )
    assert exit_info.value.code == 2
    (err,) = capsys.readouterr().err.strip().splitlines()
    assert "'float16'" in err
    assert "'float32', 'mixed_float16', 'mixed_bfloat16'" in err
    err = user_error(
        ["train", "--recipe", "demo", "--run-dir", str(tmp_path / "r")]
        + tiny_arguments("precision=bfloat16"),
        capsys,
    )
    assert "precision='bfloat16'" in err and "mixed_bfloat16" in err
