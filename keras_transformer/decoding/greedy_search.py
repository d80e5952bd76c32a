"""Greedy search over a model-agnostic `symbols_to_logits_fn` (paper §6.1 decodes
with beam search; greedy is the beam-1 special case and the fast baseline)."""

from keras import ops


def greedy_search(
    symbols_to_logits_fn,
    initial_ids,
    initial_cache,
    eos_id,
    max_length,
    pad_id=0,
):
    """Decodes by taking the most probable token at every step.

    Runs on fixed-size buffers updated in place inside `keras.ops.while_loop`,
    so it traces into a `tf.function`, compiles with XLA and runs under JAX.

    State of the loop:
        index: scalar int, the position whose token is fed next.
        ids: `[B, max_length + 1]` int, `initial_ids` then the decoded tokens;
            pad after a sentence's eos.
        finished: `[B]` bool, whether the sentence has produced eos.
        cache: whatever `symbols_to_logits_fn` keeps (batch first).

    Args:
        symbols_to_logits_fn: `fn(ids [B, 1], index, cache) -> (logits [B, 1, V]
            or [B, V], cache)`, the model's cached decoder step.
        initial_ids: int tensor `[B]`, usually bos.
        initial_cache: the cache before the first step.
        eos_id: int. End of sentence.
        max_length: int. Number of tokens to decode at most.
        pad_id: int. Written after eos. Defaults to `0`.

    Returns:
        int tensor `[B, max_length]`: the decoded tokens (eos included, then
        padding).
    """
    batch_size = ops.shape(initial_ids)[0]
    ids = ops.zeros((batch_size, max_length + 1), dtype="int32")
    ids = ops.slice_update(
        ids, [0, 0], ops.expand_dims(ops.cast(initial_ids, "int32"), 1)
    )
    finished = ops.zeros((batch_size,), dtype="bool")

    def cond(index, ids, finished, cache):
        return ops.logical_and(
            ops.less(index, max_length), ops.logical_not(ops.all(finished))
        )

    def body(index, ids, finished, cache):
        # [B, max_length + 1] -> [B, 1], the token at `index`
        current = ops.slice(ids, [0, index], [batch_size, 1])
        logits, cache = symbols_to_logits_fn(current, index, cache)
        logits = ops.reshape(logits, (batch_size, -1))
        next_ids = ops.cast(ops.argmax(logits, axis=-1), "int32")
        next_ids = ops.where(finished, pad_id, next_ids)
        ids = ops.slice_update(ids, [0, index + 1], ops.expand_dims(next_ids, 1))
        finished = ops.logical_or(finished, ops.equal(next_ids, eos_id))
        return index + 1, ids, finished, cache

    _, ids, _, _ = ops.while_loop(
        cond, body, (ops.convert_to_tensor(0, "int32"), ids, finished, initial_cache)
    )
    return ids[:, 1:]
