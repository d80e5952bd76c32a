"""Trains a tiny Transformer with `fit_resumable`; run as a subprocess by tests.

    python resume_script.py OUTPUT_DIR RESULT.npz [--slow]

Deterministic: fixed seeds, TF op determinism, a seeded reshuffling pipeline.
`--slow` sleeps after each batch so that a test can kill the process mid-run.
On completion it writes the final weights to RESULT.npz.
"""

import sys
import time

import numpy as np
import tensorflow as tf

tf.config.experimental.enable_op_determinism()

import keras  # noqa: E402
from tiny_setup import reversal_pairs, tiny_transformer  # noqa: E402

from keras_transformer.training import compile_transformer, fit_resumable  # noqa: E402
from keras_transformer.training.step_counter import optimizer_step  # noqa: E402

output_dir, result_path = sys.argv[1], sys.argv[2]
slow = "--slow" in sys.argv

keras.utils.set_random_seed(11)
dataset = (
    tf.data.Dataset.from_tensor_slices(reversal_pairs(48))
    .shuffle(48, seed=5, reshuffle_each_iteration=True)
    .batch(8)
)
model = tiny_transformer(dropout=0.1)
compile_transformer(model, warmup_steps=10, learning_rate_scale=2.0)


class Slow(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        time.sleep(0.15)


fit_resumable(
    model,
    dataset,
    total_steps=24,
    output_dir=output_dir,
    steps_per_epoch=4,
    checkpoint_every_steps=8,
    keep_checkpoints=3,
    record={"test": "resume"},
    callbacks=[Slow()] if slow else [],
    verbose=0,
)
np.savez(result_path, *[np.array(w) for w in model.weights])
print("step", optimizer_step(model))
