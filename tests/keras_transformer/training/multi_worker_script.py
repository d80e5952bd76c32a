"""One worker of a 2-worker MultiWorkerMirroredStrategy run (TF_CONFIG from env).

    TF_CONFIG=... python multi_worker_script.py RESULT.npz OUTPUT_DIR

Trains a tiny Transformer 4 steps with `fit_resumable` on the same global
batches as the other worker, both workers sharing OUTPUT_DIR (backup and
checkpoints, as on a cluster's shared file system), then resumes a fresh model
from that backup to 6 steps, and writes the final weights (and the first
model's initial ones) to RESULT.npz.
"""

import sys

import numpy as np
import tensorflow as tf
from tiny_setup import reversal_pairs, tiny_transformer

from keras_transformer.training import (
    compile_transformer,
    fit_resumable,
    is_chief,
    make_strategy,
    worker_count,
)
from keras_transformer.training.step_counter import optimizer_step

strategy = make_strategy("multi_worker")  # must come before other TF work
assert strategy.num_replicas_in_sync == 2, strategy.num_replicas_in_sync
assert worker_count(strategy) == 2, worker_count(strategy)
print("chief", is_chief(strategy))

import keras  # noqa: E402

keras.config.disable_traceback_filtering()

keras.utils.set_random_seed(3)
dataset = tf.data.Dataset.from_tensor_slices(reversal_pairs(32)).batch(8)


def resumable_run(total_steps):
    """A fresh model that `fit_resumable` trains (or resumes) to `total_steps`."""
    with strategy.scope():
        model = tiny_transformer()
        compile_transformer(model, warmup_steps=4, learning_rate_scale=2.0)
    initial = [np.array(w) for w in model.weights]
    fit_resumable(
        model,
        dataset,
        total_steps=total_steps,
        output_dir=sys.argv[2],
        steps_per_epoch=2,
        checkpoint_every_steps=2,
        verbose=0,
    )
    return model, initial


_, initial = resumable_run(4)
# A restart: the new model (other random weights) resumes from the shared
# backup, restored inside the strategy, and trains 2 more steps.
keras.utils.set_random_seed(4)
model, _ = resumable_run(6)
final = [np.array(w) for w in model.weights]
np.savez(sys.argv[1], *(initial + final))
print("steps", optimizer_step(model))
