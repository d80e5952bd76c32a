"""Greedy search over a model-agnostic `symbols_to_logits_fn` (paper §6.1 decodes
with beam search; greedy is the fast baseline, and beam search with K = 1 and
alpha = 0 returns the same tokens)."""

from keras import ops

from keras_transformer.decoding.token_by_token_search import token_by_token_search


def greedy_search(
    symbols_to_logits_fn,
    initial_ids,
    initial_cache,
    eos_id,
    max_length,
    pad_id=0,
    max_lengths=None,
    return_scores=False,
    drop_done=False,
):
    """Decodes by taking the most probable token at every step.

    A `token_by_token_search` whose choice is the argmax: fixed-size buffers
    inside `keras.ops.while_loop`, so it traces into a `tf.function`, compiles
    with XLA and runs under JAX.

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
        drop_done: bool. Take finished sentences out of the loop state
            (`token_by_token_search`): TensorFlow outside XLA. Defaults to
            `False`.

    Returns:
        int32 tensor `[B, max_length]`: the decoded tokens (eos included, then
        padding). With `return_scores`, a tuple `(ids, log_probs)` where
        `log_probs` `[B]` float32 is `log P(y | x)` of the decoded tokens, eos
        included (no length penalty).
    """
    ids, log_probs = token_by_token_search(
        symbols_to_logits_fn,
        initial_ids,
        initial_cache,
        lambda logits, index: first_max_index(logits),
        eos_id=eos_id,
        max_length=max_length,
        pad_id=pad_id,
        max_lengths=max_lengths,
        drop_done=drop_done,
    )
    return (ids, log_probs) if return_scores else ids


def first_max_index(logits):
    """`argmax` over the last axis (the first index among equal maxima).

    As a max and a min reduction: XLA on CPU runs `argmax`'s paired
    (value, index) reduction slower than the two plain ones (figures in
    docs/experiment-log.md, "Decoding speed and the search's design").

    Args:
        logits: float tensor `[..., V]`.

    Returns:
        int32 tensor `[...]`.
    """
    vocab_size = ops.shape(logits)[-1]
    best = ops.max(logits, axis=-1, keepdims=True)
    positions = ops.arange(vocab_size, dtype="int32")
    # [..., V] -> [...]: the lowest position holding the maximum (V - 1 for a
    # row of NaNs, which has none, so the id stays in range)
    return ops.min(
        ops.where(ops.equal(logits, best), positions, vocab_size - 1), axis=-1
    )
