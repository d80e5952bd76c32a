import json
import os
import pathlib
import socket
import subprocess
import sys

import keras
import numpy as np
import pytest

from keras_transformer.training import STRATEGIES, make_strategy

SCRIPT = pathlib.Path(__file__).with_name("replica_equivalence_script.py")

pytestmark = pytest.mark.skipif(
    keras.backend.backend() != "tensorflow",
    reason="tf.distribute strategies belong to the TensorFlow backend",
)


def test_two_replicas_give_the_same_weights_as_one_device():
    """MirroredStrategy on 2 logical CPUs == one device, same global batches.

    Tolerance 1e-5 absolute on every weight after 3 SGD steps (float32 sums in
    a different order differ by ~1e-7); the run that normalises each replica by
    its own token count must differ by far more, or the test proves nothing.
    """
    environment = {**os.environ, "KERAS_BACKEND": "tensorflow"}
    result = subprocess.run(
        [sys.executable, str(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=600,
        env=environment,
        cwd=pathlib.Path(__file__).resolve().parents[3],
    )
    assert result.returncode == 0, result.stderr[-3000:]
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["max_weight_change"] > 1e-2
    assert figures["max_weight_difference"] < 1e-5
    assert figures["max_weight_difference_local_normalisation"] > 1e-2
    assert figures["mirrored_loss"] == pytest.approx(figures["single_loss"], rel=1e-5)


def test_strategies_by_name():
    assert make_strategy("default").num_replicas_in_sync == 1
    assert set(STRATEGIES) == {"default", "mirrored", "multi_worker", "tpu"}
    with pytest.raises(ValueError, match="name='horovod'"):
        make_strategy("horovod")


def _free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def test_two_workers_on_localhost_end_with_identical_weights(tmp_path):
    """MultiWorkerMirroredStrategy: 2 processes, TF_CONFIG, free local ports."""
    workers = [f"127.0.0.1:{port}" for port in _free_ports(2)]
    script = pathlib.Path(__file__).with_name("multi_worker_script.py")
    processes = []
    for index in range(2):
        tf_config = {
            "cluster": {"worker": workers},
            "task": {"type": "worker", "index": index},
        }
        processes.append(
            subprocess.Popen(
                [sys.executable, str(script), str(tmp_path / f"worker{index}.npz")],
                env={
                    **os.environ,
                    "KERAS_BACKEND": "tensorflow",
                    "TF_CONFIG": json.dumps(tf_config),
                },
                cwd=pathlib.Path(__file__).resolve().parents[3],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    try:
        outputs = [p.communicate(timeout=300) for p in processes]
    finally:
        for process in processes:
            process.kill()
    for process, (stdout, stderr) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, stderr[-3000:]
        assert "steps 4" in stdout
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
