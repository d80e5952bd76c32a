"""Values and gradients of a function on the Keras backend under test."""

import keras
import numpy as np


def value_and_gradients(function, arguments, mode):
    """`function(*arguments)` (a scalar) and its gradients, on this backend.

    `mode`: `"eager"`, `"graph"` (`tf.function`; `jax.jit` on JAX) or `"xla"`
    (`tf.function(jit_compile=True)`; `jax.jit` on JAX).
    """
    if keras.backend.backend() == "jax":
        import jax  # noqa: PLC0415 (the backend under test)

        run = jax.value_and_grad(function, argnums=tuple(range(len(arguments))))
        if mode != "eager":
            run = jax.jit(run)
        value, gradients = run(*arguments)
    else:
        import tensorflow as tf  # noqa: PLC0415

        def run(*tensors):
            with tf.GradientTape() as tape:
                tape.watch(tensors)
                value = function(*tensors)
            return value, tape.gradient(value, tensors)

        if mode != "eager":
            run = tf.function(run, jit_compile=mode == "xla")
        value, gradients = run(*(tf.constant(a) for a in arguments))
    return np.array(value), [np.array(g) for g in gradients]
