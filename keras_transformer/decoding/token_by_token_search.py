"""The loop shared by greedy and sampling search: one chosen token per step."""

from keras import ops

from keras_transformer.decoding.beam_utils import gather_beams, take_per_row
from keras_transformer.decoding.done_sentences import (
    check_drop_done,
    rows_to_keep,
    run_time_rows,
    write_rows,
)


def token_by_token_search(
    symbols_to_logits_fn,
    initial_ids,
    initial_cache,
    choose_fn,
    eos_id,
    max_length,
    pad_id=0,
    max_lengths=None,
    drop_done=False,
):
    """Extends every sentence by the token `choose_fn` picks, until eos or the limit.

    Runs on fixed-size buffers updated in place inside `keras.ops.while_loop`,
    so it traces into a `tf.function`, compiles with XLA and runs under JAX.

    State of the loop:
        index: scalar int32, the position whose token is fed next.
        ids: `[B, max_length + 1]` int32, `initial_ids` then the chosen
            tokens; pad after a sentence's eos.
        finished: `[B]` bool, whether the sentence has produced eos or reached
            its maximum length.
        log_probs: `[B]` float32, the model's log probability of the tokens so
            far.
        cache: whatever `symbols_to_logits_fn` keeps (batch first).
        sentences: `{"max_lengths": [B]}`, with `drop_done` also `"rows"`
            `[B]`, each row's sentence among the B0 given.

    Args:
        symbols_to_logits_fn: `fn(ids [B, 1], index, cache) -> (logits [B, 1, V]
            or [B, V], cache)`, the model's cached decoder step.
        initial_ids: int tensor `[B]`, usually bos.
        initial_cache: the cache before the first step.
        choose_fn: `fn(logits [B, V] float32, index) -> ids [B] int32`.
        eos_id: int. End of sentence.
        max_length: int. Number of tokens to decode at most (buffer size).
        pad_id: int. Written after eos. Defaults to `0`.
        max_lengths: optional int tensor `[B]`, the most tokens each sentence
            may generate (paper §6.1: source length + 50). Defaults to
            `max_length` for every sentence.
        drop_done: bool. Take finished sentences out of the loop state (the
            rows of every leaf of the cache with them), writing their tokens
            and log probabilities to the results (`[B0, max_length + 1]` and
            `[B0]`, extra loop state), as beam search's `drop_done` does
            (`done_sentences`). Same results, for a `choose_fn` that picks
            each row's token from its own logits alone (greedy; not
            sampling, whose random numbers follow the batch). Needs run-time
            shapes: TensorFlow outside XLA. Defaults to `False`.

    Returns:
        A tuple `(ids, log_probs)`: int32 `[B, max_length]` tokens (eos
        included, then padding) and float32 `[B]` `log P(y | x)` of them.
    """
    check_drop_done(drop_done)
    batch_size = ops.shape(initial_ids)[0]
    if max_lengths is None:
        max_lengths = ops.full((batch_size,), max_length, dtype="int32")
    sentences = {"max_lengths": ops.cast(max_lengths, "int32")}
    ids = ops.full((batch_size, max_length + 1), pad_id, dtype="int32")
    ids = ops.slice_update(
        ids, [0, 0], ops.expand_dims(ops.cast(initial_ids, "int32"), 1)
    )
    finished = ops.less(sentences["max_lengths"], 1)
    log_probs = ops.zeros((batch_size,), dtype="float32")

    def cond(index, ids, finished, *rest):
        return ops.logical_and(
            ops.less(index, max_length), ops.logical_not(ops.all(finished))
        )

    def body(index, ids, finished, log_probs, cache, sentences):
        # B: the rows in the state (fewer than given with `drop_done`)
        batch_size = ops.shape(finished)[0]
        # [B, max_length + 1] -> [B, 1], the token at `index`
        current = ops.slice(ids, [0, index], [batch_size, 1])
        logits, cache = symbols_to_logits_fn(current, index, cache)
        # [B, (1,) V] -> [B, V]
        logits = ops.reshape(ops.cast(logits, "float32"), (batch_size, -1))
        next_ids = ops.cast(choose_fn(logits, index), "int32")
        # [B, V] -> [B], log p of the chosen token under the model: its logit
        # minus logsumexp (no [B, V] log-softmax is formed)
        step_log_probs = take_per_row(logits, ops.expand_dims(next_ids, 1))[
            :, 0
        ] - ops.logsumexp(logits, axis=-1)
        log_probs = log_probs + ops.where(finished, 0.0, step_log_probs)
        next_ids = ops.where(finished, pad_id, next_ids)
        ids = ops.slice_update(ids, [0, index + 1], ops.expand_dims(next_ids, 1))
        finished = ops.logical_or(
            ops.logical_or(finished, ops.equal(next_ids, eos_id)),
            ops.greater_equal(index + 1, sentences["max_lengths"]),
        )
        return index + 1, ids, finished, log_probs, cache, sentences

    state = (
        ops.convert_to_tensor(0, "int32"),
        ids,
        finished,
        log_probs,
        initial_cache,
        sentences,
    )
    if not drop_done:
        _, ids, _, log_probs, _, _ = ops.while_loop(cond, body, state)
        return ids[:, 1:], log_probs

    # The results of the B0 sentences given; every row at first, gathered by
    # a run-time selection (`done_sentences`).
    results = (ids, log_probs)
    sentences["rows"] = ops.arange(batch_size, dtype="int32")
    state = _keep_rows(state, ops.ones_like(finished))

    def drop_body(*loop_state):
        *state, results = loop_state
        state = body(*state)
        drop, keep = rows_to_keep(state[2])

        def dropped():
            written = _write_rows(results, state, ops.logical_not(keep))
            return (*_keep_rows(state, keep), written)

        return ops.cond(drop, dropped, lambda: (*state, results))

    *state, results = ops.while_loop(cond, drop_body, (*state, results))
    ids, log_probs = _write_rows(results, state, ops.ones_like(state[2]))
    return ids[:, 1:], log_probs


def _keep_rows(state, keep):
    """The loop state of the rows where `keep` `[B]` holds."""
    index, *rows = state
    # [B] -> [B']
    kept = run_time_rows(keep)
    return (index, *gather_beams(rows, kept))


def _write_rows(results, state, picked):
    """`results` (tokens and log probabilities of every sentence given) with
    the state's rows where `picked` `[B]` holds written to their sentences."""
    _, ids, _, log_probs, _, sentences = state
    return write_rows(results, (ids, log_probs), sentences["rows"], picked)
