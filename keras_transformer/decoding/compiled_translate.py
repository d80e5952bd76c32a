"""`translate` compiled for the current Keras backend: a `tf.function` (with XLA
or without) on TensorFlow, `jax.jit` on JAX.

The backend library is imported lazily here, only when asked for, so the rest
of `keras_transformer` stays on `keras.ops`.
"""

import keras

from keras_transformer.decoding.translate import translate


def compiled_translate(model, jit_compile=True, **translate_kwargs):
    """Returns `fn(source_ids) -> (ids, scores)`, `translate` compiled once per
    source shape.

    On TensorFlow the search is traced into a `tf.function`, with XLA when
    `jit_compile` (the whole while loop becomes one XLA computation). On JAX it
    is `jax.jit`-compiled with the model's weights passed in as arguments
    (through a `keras.StatelessScope`), not baked in as constants; JAX always
    compiles, so `jit_compile` is ignored there. Other backends run eagerly.

    Args:
        model: a `Transformer`.
        jit_compile: bool. XLA on TensorFlow. Defaults to `True`.
        **translate_kwargs: arguments of `translate` (`method`, `beam_size`,
            `alpha`, `max_extra_length`, `bos_id`, `eos_id`, ...).

    Returns:
        A callable taking int `source_ids` `[B, S]`.

    Example:

    >>> fn = compiled_translate(model, method="beam", beam_size=4, alpha=0.6)
    >>> ids, scores = fn(source_ids)
    """
    backend = keras.backend.backend()

    def run(source_ids):
        return translate(model, source_ids, **translate_kwargs)

    if backend == "tensorflow":
        import tensorflow as tf

        return tf.function(run, jit_compile=jit_compile)
    if backend == "jax":
        import jax

        variables = list(model.variables)

        def stateless_run(values, source_ids):
            with keras.StatelessScope(
                state_mapping=list(zip(variables, values, strict=True))
            ):
                return run(source_ids)

        jitted = jax.jit(stateless_run)
        return lambda source_ids: jitted([v.value for v in variables], source_ids)
    return run
