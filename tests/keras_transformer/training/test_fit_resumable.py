import importlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from keras_transformer.training import compile_transformer, list_checkpoints
from tests.keras_transformer.training.tiny_setup import reversal_pairs, tiny_transformer
from tests.markers import tensorflow_only

SCRIPT = pathlib.Path(__file__).with_name("resume_script.py")
ROOT = pathlib.Path(__file__).resolve().parents[3]

pytestmark = tensorflow_only(
    "kills a TensorFlow training process; the JAX backend has no tf.data fit"
)


def _run(output_dir, result, *flags):
    return subprocess.Popen(
        [sys.executable, str(SCRIPT), str(output_dir), str(result), *flags],
        cwd=ROOT,
        env={**os.environ, "KERAS_BACKEND": "tensorflow"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(process):
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr[-3000:]
    return stdout


def _weights(path):
    with np.load(path) as data:
        return [data[key] for key in sorted(data.files, key=lambda k: int(k[4:]))]


@pytest.mark.slow
def test_killed_run_resumes_to_the_same_weights_as_an_uninterrupted_one(tmp_path):
    """SIGKILL mid-run, start the same command again: identical final weights.

    Exact equality: the script enables TF op determinism, and the backup holds
    everything that changes in training (weights, Adam moments and step, the
    dropout seed generators' state), while the data stream is replayed and the
    trained batches skipped.
    """
    uninterrupted = _run(tmp_path / "a", tmp_path / "a.npz")
    assert "step 24" in _finish(uninterrupted)

    killed = _run(tmp_path / "b", tmp_path / "b.npz", "--slow")
    state_path = tmp_path / "b" / "backup" / "backup.json"
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if state_path.exists() and json.loads(state_path.read_text())["epoch"] >= 2:
            break
        assert killed.poll() is None, killed.communicate()[1][-3000:]
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=60)
    assert killed.returncode == -signal.SIGKILL
    epoch_at_kill = json.loads(state_path.read_text())["epoch"]
    assert 2 <= epoch_at_kill < 6
    assert not (tmp_path / "b.npz").exists()

    resumed = _run(tmp_path / "b", tmp_path / "b.npz")
    assert "step 24" in _finish(resumed)
    for a, b in zip(
        _weights(tmp_path / "a.npz"), _weights(tmp_path / "b.npz"), strict=True
    ):
        np.testing.assert_array_equal(a, b)

    # Rotating checkpoints: every 8 steps, the last 3 kept, each with a record.
    kept = list_checkpoints(tmp_path / "a" / "checkpoints")
    assert [os.path.basename(p) for p in kept] == [
        "ckpt-00000008.weights.h5",
        "ckpt-00000016.weights.h5",
        "ckpt-00000024.weights.h5",
    ]
    # The killed run may have died between its backup and its checkpoint of
    # step 8; after the restart it continues the same 8-step rhythm.
    kept = [
        os.path.basename(p) for p in list_checkpoints(tmp_path / "b" / "checkpoints")
    ]
    assert kept[-2:] == ["ckpt-00000016.weights.h5", "ckpt-00000024.weights.h5"]
    record = json.loads(
        (tmp_path / "b" / "checkpoints" / "ckpt-00000024.json").read_text()
    )
    assert record == {"test": "resume", "step": 24}

    # Starting a finished run again trains nothing more.
    again = _run(tmp_path / "b", tmp_path / "c.npz")
    assert "step 24" in _finish(again)


def test_a_time_limit_is_refused_with_several_workers(tmp_path, monkeypatch):
    """Workers could stop at different epochs and leave the others waiting."""
    module = importlib.import_module("keras_transformer.training.fit_resumable")
    monkeypatch.setattr(module, "worker_count", lambda strategy=None: 2)
    model = tiny_transformer()
    compile_transformer(model)
    dataset = tf.data.Dataset.from_tensor_slices(reversal_pairs(8)).batch(4)
    with pytest.raises(ValueError, match="max_minutes=5 with 2 workers"):
        module.fit_resumable(model, dataset, 4, str(tmp_path), max_minutes=5)
    assert not list(tmp_path.iterdir())


def test_fit_resumable_raises_no_library_warning(tmp_path, recwarn):
    # Keras warns when `shuffle=True` (its default) meets a tf.data.Dataset.
    from keras_transformer.training.fit_resumable import fit_resumable

    model = tiny_transformer()
    compile_transformer(model)
    dataset = tf.data.Dataset.from_tensor_slices(reversal_pairs(8)).batch(4)
    fit_resumable(model, dataset, 2, str(tmp_path), steps_per_epoch=2, verbose=0)
    messages = [str(w.message) for w in recwarn.list]
    assert not [m for m in messages if "shuffle" in m], messages


def test_planned_updates_round_up_to_whole_epochs_and_are_the_updates_trained(
    tmp_path,
):
    from keras_transformer.training import planned_updates
    from keras_transformer.training.fit_resumable import fit_resumable
    from keras_transformer.training.step_counter import optimizer_step

    # 130 batches in epochs of 50: 3 epochs, 150 batches; 2 per update: 75.
    assert planned_updates(130, 50, accumulation=2) == 75
    assert planned_updates(150, 50) == 150
    model = tiny_transformer()
    compile_transformer(model)
    dataset = tf.data.Dataset.from_tensor_slices(reversal_pairs(8)).batch(4)
    fit_resumable(model, dataset, 3, str(tmp_path), steps_per_epoch=2, verbose=0)
    assert optimizer_step(model) == planned_updates(3, 2) == 4
