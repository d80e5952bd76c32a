"""One worker of a 2-worker MultiWorkerMirroredStrategy run (TF_CONFIG from env).

    TF_CONFIG=... python multi_worker_script.py RESULT.npz

Trains a tiny Transformer a few steps on the same global batches as the other
worker and writes its final weights (and initial ones) to RESULT.npz.
"""

import sys

import numpy as np
import tensorflow as tf
from tiny_setup import reversal_pairs, tiny_transformer

from keras_transformer.training import compile_transformer, make_strategy
from keras_transformer.training.step_counter import optimizer_step

strategy = make_strategy("multi_worker")  # must come before other TF work
assert strategy.num_replicas_in_sync == 2, strategy.num_replicas_in_sync

import keras  # noqa: E402

keras.config.disable_traceback_filtering()

keras.utils.set_random_seed(3)
dataset = tf.data.Dataset.from_tensor_slices(reversal_pairs(32)).batch(8)

with strategy.scope():
    model = tiny_transformer()
    compile_transformer(model, warmup_steps=4, learning_rate_scale=2.0)
initial = [np.array(w) for w in model.weights]
model.fit(dataset, epochs=1, verbose=0)
final = [np.array(w) for w in model.weights]
np.savez(sys.argv[1], *(initial + final))
print("steps", optimizer_step(model))
