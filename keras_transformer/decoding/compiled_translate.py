"""`translate` compiled for the current Keras backend: a `tf.function` (with XLA
or without) on TensorFlow, `jax.jit` on JAX.

The backend library is imported lazily here, only when asked for, so the rest
of `keras_transformer` stays on `keras.ops`.
"""

import keras

from keras_transformer.decoding.translate import check_decoding_config, translate
from keras_transformer.models import BOS_ID, EOS_ID


def compiled_translate(
    model,
    config=None,
    jit_compile=True,
    *,
    bos_id=BOS_ID,
    eos_id=EOS_ID,
    max_length=None,
    seed=None,
    constraint=None,
    dynamic_shapes=False,
):
    """Returns `fn(source_ids, word_counts=None, buffer_length=None) -> (ids,
    scores)`, `translate` compiled once per source shape (and per
    `buffer_length`, a Python int replacing `max_length` for one call: a
    parser's buffer sized by its batch's word counts).

    On TensorFlow the search is traced into a `tf.function`, with XLA when
    `jit_compile` (the whole while loop becomes one XLA computation). On JAX it
    is `jax.jit`-compiled with the model's weights passed in as arguments
    (through a `keras.StatelessScope`), not baked in as constants; JAX always
    compiles, so `jit_compile` is ignored there. Other backends run eagerly.

    Args:
        model: a `Transformer`.
        config: a `DecodingConfig`, see `translate`. Defaults to
            `DecodingConfig()`, the paper's beam search (§6.1).
        jit_compile: bool. XLA on TensorFlow. Defaults to `True`.
        bos_id: int. The first decoder input. Defaults to `BOS_ID` (2).
        eos_id: int. End of sentence. Defaults to `EOS_ID` (3).
        max_length: optional int. Buffer size T; see `translate`.
        seed: int or `keras.random.SeedGenerator`, for `"sample"`.
        constraint: optional `BracketConstraint` (parsing); the callable then
            takes each sentence's `word_counts` `[B]` too.
        dynamic_shapes: bool. On TensorFlow, trace the search once for
            every batch size, source width and buffer (the buffer a scalar
            tensor, as the exported signatures run it) instead of once per
            shape. Without XLA that one graph runs every shape: a caller
            that meets many shapes and few sentences of each compiles once,
            but its steps are slower than XLA's (BUILD_NOTES.md, "Parsing
            speed"). With `jit_compile`, XLA still compiles each shape, from
            the one trace, traced at once under a name aligned to the next
            2^18 of TensorFlow's trace counter (`align_trace_names`): the
            same name in a process that builds the same searches in the
            same order, so that XLA's persistent compilation cache, which
            keys an executable by its function's name, serves a later
            process. Defaults to `False`.

    Returns:
        A callable taking int `source_ids` `[B, S]` (and `word_counts`).

    Examples:
        >>> fn = compiled_translate(model, DecodingConfig(method="greedy"))
        >>> ids, scores = fn(source_ids)
    """
    config = check_decoding_config(config)

    def run(source_ids, word_counts=None, buffer_length=None):
        return translate(
            model,
            source_ids,
            config,
            bos_id=bos_id,
            eos_id=eos_id,
            max_length=max_length if buffer_length is None else buffer_length,
            seed=seed,
            constraint=constraint,
            word_counts=word_counts,
        )

    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        if not dynamic_shapes:
            return tf.function(run, jit_compile=jit_compile, autograph=False)
        return _dynamic_shape_search(
            tf, run, config, max_length, constraint, jit_compile
        )
    if backend == "jax":
        import jax

        variables = list(model.variables)

        def stateless_run(values, source_ids, word_counts, buffer_length):
            with keras.StatelessScope(
                state_mapping=list(zip(variables, values, strict=True))
            ):
                return run(source_ids, word_counts, buffer_length)

        jitted = jax.jit(stateless_run, static_argnums=(3,))
        return lambda source_ids, word_counts=None, buffer_length=None: jitted(
            [v.value for v in variables], source_ids, word_counts, buffer_length
        )
    return run


def _dynamic_shape_search(tf, run, config, max_length, constraint, jit_compile):
    """`run` traced once with unknown batch, width and buffer; the buffer
    (the given one, else `max_length`, else the width + `max_extra_length`)
    is passed as a scalar tensor (with `jit_compile`, a compile-time constant
    of each XLA executable, as the shapes are)."""
    specs = [tf.TensorSpec([None, None], tf.int32)]
    if constraint is not None:
        specs.append(tf.TensorSpec([None], tf.int32))
    specs.append(tf.TensorSpec([], tf.int32))
    traced = tf.function(
        (lambda s, w, b: run(s, w, b))
        if constraint is not None
        else (lambda s, b: run(s, None, b)),
        input_signature=specs,
        autograph=False,
        jit_compile=jit_compile,
    )
    if jit_compile:
        from keras_transformer.training.xla_compilation import align_trace_names

        # Traced now, under a name that does not depend on what this process
        # traced before (the persistent cache's key).
        align_trace_names()
        traced.get_concrete_function()

    def call(source_ids, word_counts=None, buffer_length=None):
        if buffer_length is None:
            buffer_length = max_length
        if buffer_length is None:
            buffer_length = int(source_ids.shape[1]) + config.max_extra_length
        source_ids = tf.convert_to_tensor(source_ids, tf.int32)
        buffer_length = tf.constant(buffer_length, tf.int32)
        if constraint is None:
            return traced(source_ids, buffer_length)
        return traced(
            source_ids, tf.convert_to_tensor(word_counts, tf.int32), buffer_length
        )

    return call
