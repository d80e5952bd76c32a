"""Self-attention cache writes in place, for TensorFlow graph mode.

`keras.ops.slice_update` is XLA's `DynamicUpdateSlice` op on the TensorFlow
backend. Under XLA it writes in place; in a plain TensorFlow graph it runs as
a one-op XLA computation that copies the whole cache for every write (6
cache writes per decoder step of `small`). TensorFlow's `InplaceUpdate` op
writes rows of its input's buffer without copying it, which makes greedy
and beam search faster on CPU (figures in docs/experiment-log.md, "Side by side
with CTranslate2").

That is safe only for caches nobody else reads. `owned_caches` gives
`translate` such caches: a private copy (`DeepCopy`, a stateful op that
TensorFlow neither folds into a constant nor shares between calls) of the
initial caches of each call, whose buffers then flow only through the search
loop. Each write's new keys depend on the token chosen from the previous
step's logits, which depend on every read of the cache in that step, so a
write never overtakes a read. Under XLA, under JAX and in eager mode nothing
changes.
"""

import contextlib

import keras
from keras import tree

from keras_transformer.layers.cached_multi_head_attention import cache_writer


def writes_in_place():
    """Whether the code being traced is a TensorFlow graph outside XLA."""
    if keras.backend.backend() != "tensorflow":
        return False
    import tensorflow as tf  # noqa: PLC0415 (the TensorFlow backend only)

    return not tf.executing_eagerly() and run_time_shapes()


def run_time_shapes():
    """Whether a loop's tensors may change shape: TensorFlow, eagerly or in a
    graph outside XLA (XLA and JAX compile each shape)."""
    if keras.backend.backend() != "tensorflow":
        return False
    import tensorflow as tf  # noqa: PLC0415 (the TensorFlow backend only)
    from tensorflow.python.ops import control_flow_util  # noqa: PLC0415

    if tf.executing_eagerly():
        return True
    # A `tf.function(jit_compile=True)` enters an XLA context while tracing.
    return not control_flow_util.GraphOrParentsInXlaContext(
        tf.compat.v1.get_default_graph()
    )


def write_rows_in_place(cache, start, updates):
    """Writes `updates` `[B, H, t, d]` into `cache` `[B, H, S, d]` at `start`.

    The same result as `keras.ops.slice_update(cache, [0, 0, start, 0],
    updates)`, but `cache`'s buffer is updated and returned: the caller must
    own it (see the module docstring). As `[B*H*S, d]` rows, position `start +
    j` of head row `r = b * H + h` is row `r * S + start + j`.
    """
    import tensorflow as tf  # noqa: PLC0415 (the TensorFlow backend only)

    # One `Unpack` of the shape, not a slice per size: ops this search's
    # graph repeats in every layer (BUILD_NOTES.md, "Beam search and the cache")
    shape = tf.shape(cache)
    sentences, heads, length, depth = tf.unstack(shape, num=4)
    depth = cache.shape[3] or depth
    new_positions = updates.shape[2] or tf.shape(updates)[2]
    # [B*H, 1] + [1, t] -> [B*H*t], in the order of `updates`' rows
    rows = tf.reshape(
        tf.expand_dims(tf.range(sentences * heads) * length, 1)
        + tf.cast(start, "int32")
        + tf.expand_dims(tf.range(new_positions), 0),
        (-1,),
    )
    written = tf.raw_ops.InplaceUpdate(
        x=tf.reshape(cache, (-1, depth)),
        i=rows,
        v=tf.reshape(updates, (-1, depth)),
    )
    return tf.reshape(written, shape)


@contextlib.contextmanager
def owned_caches(caches):
    """Yields the caches a search may write in place, and writes them so.

    In a TensorFlow graph outside XLA, yields private copies of `caches` and
    makes `CachedMultiHeadAttention` write them with `write_rows_in_place`
    inside the block; otherwise yields `caches` and changes nothing.

    Args:
        caches: the self-attention caches of `init_cache` (any structure of
            tensors).
    """
    if not writes_in_place():
        yield caches
        return
    import tensorflow as tf  # noqa: PLC0415 (the TensorFlow backend only)

    copies = tree.map_structure(lambda cache: tf.raw_ops.DeepCopy(x=cache), caches)
    with cache_writer(write_rows_in_place):
        yield copies
