"""Run in a fresh process (logical CPU devices must be set before TF starts).

Trains the same tiny Transformer for a few steps on the same global batches,
once on one device and once under MirroredStrategy over two logical CPUs, and
prints the largest absolute weight difference as JSON, one line per dtype
policy named on the command line (both in one process: TensorFlow starts
once). SGD, not Adam: Adam with
epsilon 1e-9 turns float rounding in near-zero gradients into full-size steps of
either sign, which would hide what is compared here (the gradients). A third
run normalises the loss by each replica's own token count (Keras' default
behaviour) to show that the comparison detects the difference. Each argument
names the dtype policy of all three runs (default float32; e.g.
mixed_bfloat16).
"""

import json
import sys

import numpy as np
import tensorflow as tf

cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(
    cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2
)

import keras  # noqa: E402
from tiny_setup import tiny_transformer  # noqa: E402

from keras_transformer.training import (  # noqa: E402
    LabelSmoothedCrossEntropy,
    compile_transformer,
    make_strategy,
)

STEPS, GLOBAL_BATCH = 3, 8


def data():
    rng = np.random.default_rng(0)
    source = rng.integers(4, 40, (STEPS * GLOBAL_BATCH, 9)).astype("int32")
    target = rng.integers(4, 40, (STEPS * GLOBAL_BATCH, 8)).astype("int32")
    # Replica 0 gets long targets, replica 1 short ones: unequal token counts,
    # so only global-token normalisation makes the two runs agree.
    for start in range(0, len(target), GLOBAL_BATCH):
        target[start + GLOBAL_BATCH // 2 : start + GLOBAL_BATCH, 2:] = 0
        source[start + GLOBAL_BATCH // 2 : start + GLOBAL_BATCH, 5:] = 0
    decoder_input = np.concatenate(
        [np.full((len(target), 1), 2, "int32"), target[:, :-1]], axis=1
    )
    inputs = {"source_ids": source, "target_ids": decoder_input}
    return tf.data.Dataset.from_tensor_slices((inputs, target)).batch(GLOBAL_BATCH)


class LocallyNormalisedLoss(LabelSmoothedCrossEntropy):
    """Divides by the replica's own token count: the behaviour we avoid."""

    def call(self, y_true, y_pred):
        real = keras.ops.cast(keras.ops.not_equal(y_true, 0), "float32")
        local = keras.ops.sum(real)
        # The global-token mean times global / local / replicas = the mean of
        # per-replica means (the replica sum of gradients is then their mean).
        context = tf.distribute.get_replica_context()
        if context is None:  # Keras' symbolic build, outside any replica
            return super().call(y_true, y_pred)
        global_ = context.all_reduce("sum", local)
        replicas = context.num_replicas_in_sync
        return super().call(y_true, y_pred) * global_ / local / replicas


def train(strategy, local_loss=False):
    keras.utils.set_random_seed(7)
    with strategy.scope():
        model = tiny_transformer(vocab_size=40)
        compile_transformer(model, optimizer=keras.optimizers.SGD(0.5))
        if local_loss:
            model.compile(
                optimizer=keras.optimizers.SGD(0.5), loss=LocallyNormalisedLoss()
            )
    initial = [np.array(w) for w in model.weights]
    history = model.fit(data(), epochs=1, verbose=0)
    train.policy = model.dtype_policy.name
    return [np.array(w) for w in model.weights], history.history["loss"][-1], initial


def max_difference(a, b):
    return max(float(np.abs(x - y).max()) for x, y in zip(a, b, strict=True))


mirrored_strategy = make_strategy("mirrored", devices=["/cpu:0", "/cpu:1"])
assert mirrored_strategy.num_replicas_in_sync == 2
for precision in sys.argv[1:] or ["float32"]:
    keras.config.set_dtype_policy(precision)
    single, single_loss, initial = train(make_strategy("default"))
    mirrored, mirrored_loss, _ = train(mirrored_strategy)
    local, _, _ = train(mirrored_strategy, local_loss=True)
    figures = {
        "precision": precision,
        "policy": train.policy,  # the policy the model really trained in
        "max_weight_difference": max_difference(single, mirrored),
        "max_weight_difference_local_normalisation": max_difference(single, local),
        "max_weight_change": max_difference(single, initial),
        "single_loss": single_loss,
        "mirrored_loss": mirrored_loss,
    }
    print(json.dumps(figures), flush=True)
