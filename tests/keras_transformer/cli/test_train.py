import json
import shutil

from keras_transformer import cli
from keras_transformer.recipes import get_recipe
from tests.keras_transformer.cli.conftest import tiny_arguments


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
