import json
import os
import pathlib
import subprocess
import sys

import keras
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
