import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from keras_transformer.training import (
    STRATEGIES,
    is_chief,
    make_strategy,
    worker_count,
)
from tests.keras_transformer.training.workers import run_workers
from tests.markers import tensorflow_only

SCRIPT = pathlib.Path(__file__).with_name("replica_equivalence_script.py")

pytestmark = tensorflow_only(
    "tf.distribute strategies belong to the TensorFlow backend"
)


@pytest.fixture(scope="module")
def replica_figures():
    """`{precision: figures}` of the script, both precisions in one process."""
    environment = {**os.environ, "KERAS_BACKEND": "tensorflow"}
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "float32", "mixed_bfloat16"],
        capture_output=True,
        text=True,
        timeout=600,
        env=environment,
        cwd=pathlib.Path(__file__).resolve().parents[3],
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [json.loads(line) for line in result.stdout.strip().splitlines()[-2:]]
    return {figures["precision"]: figures for figures in lines}


@pytest.mark.slow
@pytest.mark.parametrize(
    "precision, tolerance, loss_tolerance",
    [("float32", 1e-5, 1e-5), ("mixed_bfloat16", 1e-2, 1e-4)],
)
def test_two_replicas_give_the_same_weights_as_one_device(
    replica_figures, precision, tolerance, loss_tolerance
):
    """MirroredStrategy on 2 logical CPUs == one device, same global batches.

    Tolerance 1e-5 absolute on every weight after 3 SGD steps in float32
    (float32 sums in a different order differ by ~1e-7); 1e-2 in
    mixed_bfloat16, where sums in another order round differently in
    bfloat16 (measured: 4.9e-3, against 8.8e-2 for the wrong normalisation).
    The run that normalises each replica by its own token count must differ
    by far more, or the test proves nothing.
    """
    figures = replica_figures[precision]
    assert figures["policy"] == precision
    assert figures["max_weight_change"] > 1e-1
    assert figures["max_weight_difference"] < tolerance
    assert figures["max_weight_difference_local_normalisation"] > max(
        5 * tolerance, 1e-2
    )
    assert figures["mirrored_loss"] == pytest.approx(
        figures["single_loss"], rel=loss_tolerance
    )


def test_strategies_by_name():
    assert make_strategy("default").num_replicas_in_sync == 1
    assert set(STRATEGIES) == {"default", "mirrored", "multi_worker", "tpu"}
    with pytest.raises(ValueError, match="name='horovod'"):
        make_strategy("horovod")


def test_one_process_strategies_are_their_own_chief():
    for strategy in (make_strategy("default"), make_strategy("mirrored")):
        assert is_chief(strategy)
        assert worker_count(strategy) == 1
    assert is_chief() and worker_count() == 1


@pytest.mark.slow
def test_two_workers_on_localhost_end_with_identical_weights(tmp_path):
    """MultiWorkerMirroredStrategy: 2 processes, TF_CONFIG, free local ports.

    Both run `fit_resumable` into one shared run directory, as on a cluster,
    4 steps, then resume from its backup to 6 steps.
    """
    script = pathlib.Path(__file__).with_name("multi_worker_script.py")
    outputs = run_workers(
        lambda index: [
            sys.executable,
            str(script),
            str(tmp_path / f"worker{index}.npz"),
            str(tmp_path / "run"),
        ]
    )
    for returncode, stdout, stderr in outputs:
        assert returncode == 0, stderr[-3000:]
        assert "steps 6" in stdout
    # Worker 0 of a cluster without a "chief" task is the chief.
    assert ["chief True" in out for _, out, _ in outputs] == [True, False]
    results = []
    for index in range(2):
        with np.load(tmp_path / f"worker{index}.npz") as data:
            arrays = [data[f"arr_{i}"] for i in range(len(data.files))]
        results.append(arrays)
    half = len(results[0]) // 2
    for a, b in zip(results[0][half:], results[1][half:], strict=True):
        np.testing.assert_array_equal(a, b)
    changed = max(
        float(np.abs(i - f).max())
        for i, f in zip(results[0][:half], results[0][half:], strict=True)
    )
    assert changed > 1e-3
    # One set of files in the shared run directory, complete and written
    # once (by the chief): two workers writing the same files race.
    run = tmp_path / "run"
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == [
        "ckpt-00000002.json",
        "ckpt-00000002.weights.h5",
        "ckpt-00000004.json",
        "ckpt-00000004.weights.h5",
        "ckpt-00000006.json",
        "ckpt-00000006.weights.h5",
    ]
    record = json.loads((run / "checkpoints" / "ckpt-00000006.json").read_text())
    assert record["step"] == 6
    assert json.loads((run / "backup" / "backup.json").read_text()) == {
        "epoch": 3,
        "step": 6,
    }
    assert not list(run.rglob("*partial*"))
