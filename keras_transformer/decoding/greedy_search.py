"""Greedy search over a model-agnostic `symbols_to_logits_fn` (paper §6.1 decodes
with beam search; greedy is the fast baseline, and beam search with K = 1 and
alpha = 0 returns the same tokens)."""

from keras import ops


def greedy_search(
    symbols_to_logits_fn,
    initial_ids,
    initial_cache,
    eos_id,
    max_length,
    pad_id=0,
    max_lengths=None,
    return_scores=False,
):
    """Decodes by taking the most probable token at every step.

    Runs on fixed-size buffers updated in place inside `keras.ops.while_loop`,
    so it traces into a `tf.function`, compiles with XLA and runs under JAX.

    State of the loop:
        index: scalar int32, the position whose token is fed next.
        ids: `[B, max_length + 1]` int32, `initial_ids` then the decoded
            tokens; pad after a sentence's eos.
        finished: `[B]` bool, whether the sentence has produced eos or reached
            its maximum length.
        log_probs: `[B]` float32, the log probability of the tokens so far.
        cache: whatever `symbols_to_logits_fn` keeps (batch first).

    Args:
        symbols_to_logits_fn: `fn(ids [B, 1], index, cache) -> (logits [B, 1, V]
            or [B, V], cache)`, the model's cached decoder step.
        initial_ids: int tensor `[B]`, usually bos.
        initial_cache: the cache before the first step.
        eos_id: int. End of sentence.
        max_length: int. Number of tokens to decode at most (buffer size).
        pad_id: int. Written after eos. Defaults to `0`.
        max_lengths: optional int tensor `[B]`, the most tokens each sentence
            may generate (paper §6.1: source length + 50). Defaults to
            `max_length` for every sentence.
        return_scores: bool. Also return the log probabilities. Defaults to
            `False`.

    Returns:
        int32 tensor `[B, max_length]`: the decoded tokens (eos included, then
        padding). With `return_scores`, a tuple `(ids, log_probs)` where
        `log_probs` `[B]` float32 is `log P(y | x)` of the decoded tokens, eos
        included (no length penalty).
    """
    batch_size = ops.shape(initial_ids)[0]
    if max_lengths is None:
        max_lengths = ops.full((batch_size,), max_length, dtype="int32")
    max_lengths = ops.cast(max_lengths, "int32")
    ids = ops.full((batch_size, max_length + 1), pad_id, dtype="int32")
    ids = ops.slice_update(
        ids, [0, 0], ops.expand_dims(ops.cast(initial_ids, "int32"), 1)
    )
    finished = ops.less(max_lengths, 1)
    log_probs = ops.zeros((batch_size,), dtype="float32")

    def cond(index, ids, finished, log_probs, cache):
        return ops.logical_and(
            ops.less(index, max_length), ops.logical_not(ops.all(finished))
        )

    def body(index, ids, finished, log_probs, cache):
        # [B, max_length + 1] -> [B, 1], the token at `index`
        current = ops.slice(ids, [0, index], [batch_size, 1])
        logits, cache = symbols_to_logits_fn(current, index, cache)
        # [B, (1,) V] -> [B, V]
        logits = ops.reshape(ops.cast(logits, "float32"), (batch_size, -1))
        next_ids = ops.cast(ops.argmax(logits, axis=-1), "int32")
        if return_scores:
            # [B, V] -> [B], log p of the chosen token
            step_log_probs = ops.max(ops.log_softmax(logits, axis=-1), axis=-1)
            log_probs = log_probs + ops.where(finished, 0.0, step_log_probs)
        next_ids = ops.where(finished, pad_id, next_ids)
        ids = ops.slice_update(ids, [0, index + 1], ops.expand_dims(next_ids, 1))
        finished = ops.logical_or(
            ops.logical_or(finished, ops.equal(next_ids, eos_id)),
            ops.greater_equal(index + 1, max_lengths),
        )
        return index + 1, ids, finished, log_probs, cache

    _, ids, _, log_probs, _ = ops.while_loop(
        cond,
        body,
        (
            ops.convert_to_tensor(0, "int32"),
            ids,
            finished,
            log_probs,
            initial_cache,
        ),
    )
    if return_scores:
        return ids[:, 1:], log_probs
    return ids[:, 1:]
