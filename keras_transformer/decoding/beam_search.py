"""Beam search over a model-agnostic `symbols_to_logits_fn` (paper §6.1).

"We used beam search with a beam size of 4 and length penalty alpha = 0.6 ...
We set the maximum output length during inference to input length + 50, but
terminate early when possible." The search keeps two sets of K hypotheses per
sentence, as tensor2tensor, the TF Model Garden and flax do:

- **alive** beams, which have not produced eos and are extended at every step,
  ranked by log probability;
- **finished** beams, which have produced eos (or reached their sentence's
  maximum length), ranked by the length-penalised score
  `log P(y | x) / ((5 + |y|) / 6) ** alpha` (GNMT, Wu et al. 2016), where `|y|`
  counts the generated tokens, eos included.

Each step scores the K * V one-token extensions of the alive beams and keeps
the best 2K by log probability (found among each beam's best 2K tokens).
Those among the best K that end in eos are merged into the finished set (as
fairseq does: a plain K-beam step would have picked them, so K = 1 with
alpha = 0 is exactly greedy search); the best K that do not end in eos become
the new alive set. At most K of the 2K end in eos, so at least K remain to
continue: finishing beams never starve the live ones.
A sentence is done when the worst of its K finished scores beats the best score
any alive beam could still reach, `alive log prob / penalty(max length)` (log
probabilities only fall, and with alpha >= 0 the penalty only grows); the loop
stops when every sentence is done or the buffer is full. Hugging Face's
stopping rules are options (`beam_stopping`), for imported models.

Notation: B batch, K beams, T the buffer length `max_length`, V vocabulary.
"""

from keras import ops

from keras_transformer.decoding.beam_stopping import (
    EARLY_STOPPINGS,
    NEG_INF,
    is_valid,
    sentences_done,
)
from keras_transformer.decoding.beam_utils import (
    flat_beam_indices,
    gather_beams,
    take_per_row,
    tile_beams,
    top_k_by_blocks,
)
from keras_transformer.decoding.done_sentences import (
    check_drop_done,
    drop_done_sentences,
    every_result,
    select_beam_rows,
    start_dropping,
)
from keras_transformer.decoding.length_penalty import length_penalty
from keras_transformer.validation import check_one_of


def _is_int_scalar_tensor(x):
    """Whether `x` is a scalar int32 tensor (a run-time buffer size)."""
    shape = getattr(x, "shape", None)
    return shape is not None and len(shape) == 0 and "int32" in str(x.dtype)


def beam_search(
    symbols_to_logits_fn,
    initial_ids,
    initial_cache,
    beam_size,
    alpha,
    eos_id,
    max_length,
    max_lengths=None,
    pad_id=0,
    tile_cache_fn=tile_beams,
    reorder_cache_fn=gather_beams,
    length_normalization="gnmt",
    early_stopping="exact",
    banned_ids=(),
    drop_done=False,
    select_cache_fn=None,
):
    """Finds the K best hypotheses per sentence under a length-penalised score
    (`length_penalty`: GNMT's by default), exactly with
    `early_stopping="exact"`, the default (`beam_stopping`).

    Runs on fixed-size buffers updated in place inside `keras.ops.while_loop`,
    so it traces into a `tf.function`, compiles with XLA
    (`jit_compile=True`) and runs under `jax.jit`.

    State of the loop (one tensor each, fixed shapes and dtypes):
        index: scalar int32. The position whose token is fed next; the step
            writes position `index + 1`, the `index + 1`-th generated token.
        alive_seq: `[B, K, T + 1]` int32. `initial_ids`, then the tokens of the
            alive beams, then `pad_id`.
        alive_log_probs: `[B, K]` float32. Log probability of each alive beam,
            sorted best first; `NEG_INF` (about -1e9) for placeholders.
        finished_seq: `[B, K, T + 1]` int32. The finished hypotheses, eos
            included, then `pad_id`.
        finished_scores: `[B, K]` float32. Their length-penalised scores,
            sorted best first; `NEG_INF` for empty slots.
        finished_flags: `[B, K]` bool. Whether a finished slot is filled.
        done: `[B]` bool. Whether a sentence is done (`early_stopping`); its
            finished set takes no more hypotheses.
        cache: the cache of `symbols_to_logits_fn` with leaves `[B*K, ...]`,
            row `b*K + k` belonging to alive beam k of sentence b.
        sentences: `{"max_lengths": [B] int32, "max_penalty": [B] float32}`,
            each sentence's limit and the penalty there; with `drop_done`
            also `"rows"` `[B]`, each row's sentence in the batch given.

    With `drop_done` the batch B of the state is the sentences still
    searching, and the results of every sentence given are extra loop state
    (`done_sentences`).

    Args:
        symbols_to_logits_fn: `fn(ids [B*K, 1], index, cache) -> (logits
            [B*K, 1, V] or [B*K, V], cache)`, the model's cached decoder step
            (the same signature as `greedy_search`'s). Logits are normalised
            here with a log-softmax.
        initial_ids: int tensor `[B]`, usually bos.
        initial_cache: a nest of tensors with leaves `[B, ...]`, batch first;
            it is tiled to `[B*K, ...]` once here and its rows are reordered
            along axis 0 whenever beams are.
        beam_size: int. K, the beams kept per sentence (the paper uses 4).
        alpha: float >= 0, or a scalar float tensor (which the caller must
            check). The length penalty's exponent (the paper uses 0.6); 0 ranks
            by log probability alone.
        eos_id: int. End of sentence.
        max_length: int, or a scalar int32 tensor (positive; checked by
            the caller) where the backend allows run-time shapes (TensorFlow
            graph mode, not XLA or JAX). T, the size of the buffers: the most
            tokens any sentence may generate.
        max_lengths: optional int tensor `[B]`: the most tokens each sentence
            may generate (paper §6.1: source length + 50), clipped to
            `[1, max_length]`. A beam that reaches its sentence's limit
            without eos is finished there, without eos, and scored at that
            length. Defaults to `max_length` for every sentence.
        pad_id: int. Written after a hypothesis' last token. Defaults to `0`.
        tile_cache_fn: `fn(initial_cache, K) -> cache`, the search's cache
            before the first step. Defaults to `tile_beams` (every leaf
            `[B, ...]` -> `[B*K, ...]`).
        reorder_cache_fn: `fn(cache, flat_indices [B*K]) -> cache`, the cache
            of the surviving beams, row i from row `flat_indices[i]`. Defaults
            to `gather_beams` (every leaf, along axis 0). A cache that keeps
            one row per sentence and records each beam's history apart (as
            `translate`'s beam-shared cache does) reorders only that record.
        length_normalization: `"gnmt"` (default, the paper's) or
            `"average"` (`|y| ** alpha`, imported Marian models'; see
            `length_penalty`).
        early_stopping: `"exact"` (default: stop a sentence only when no
            alive beam can beat its K finished hypotheses, so the result is
            the K best; Hugging Face's `early_stopping="never"`),
            `"heuristic"` (Hugging Face's default, `early_stopping=False`:
            stop once K are finished and the best alive beam would not beat
            them if it ended now; it can miss the best hypothesis) or
            `"k_finished"` (Hugging Face's `early_stopping=True`). See
            `beam_stopping`.
        banned_ids: sequence of int. Ids never generated, removed after the
            log-softmax, so their probability stays in its normalization (as
            Hugging Face's `bad_words_ids` without `renormalize_logits`).
            Defaults to `()`. A caller that bans an id from the softmax
            instead sets its logits to `NEG_INF` (`translate` does so for
            pad by default).
        drop_done: bool. Take done sentences out of the loop state, so that
            later steps run on the sentences still searching only (as
            CTranslate2 does; a batch's sentences finish at different steps).
            Same results. Needs run-time shapes: TensorFlow graph mode, not
            XLA or JAX. Defaults to `False`.
        select_cache_fn: with `drop_done`, `fn(cache, sentences [B'],
            flat_indices [B'*K]) -> cache`: the cache of the sentences kept,
            rows `sentences` of the leaves with one row per sentence and rows
            `flat_indices` (`b*K + k`) of those with one row per beam.
            Defaults to `None`: every leaf has one row per beam.

    Returns:
        A tuple `(sequences, scores)`:
        `sequences`: int32 `[B, K, T]`, the K best hypotheses of each
            sentence, best first: tokens, eos, then `pad_id`.
        `scores`: float32 `[B, K]`, `log P(y | x) / length_penalty(|y|)`
            (GNMT's `((5 + |y|) / 6) ** alpha` by default) with `|y|` the
            number of generated tokens, eos included. `-inf`
            marks an empty slot, possible only when a sentence has fewer than
            K distinct hypotheses.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §6.1.
        - [Wu et al., 2016. Google's Neural Machine Translation System: Bridging the Gap
          between Human and Machine Translation](https://arxiv.org/abs/1609.08144), §7
          (Eq. 14, the length penalty).

    Examples:
        >>> from keras import ops
        >>> def fn(ids, index, cache):  # every step: p(eos) = 0.6, p(4) = 0.4
        ...     logits = ops.log(ops.convert_to_tensor([[1e-9, 1e-9, 1e-9, .6, .4]]))
        ...     return ops.tile(logits, (ops.shape(ids)[0], 1)), cache
        >>> ids, scores = beam_search(fn, ops.array([2]), (), beam_size=2,
        ...                           alpha=0.0, eos_id=3, max_length=3)
        >>> ops.convert_to_numpy(ids).tolist()
        [[[3, 0, 0], [4, 3, 0]]]
    """
    if not isinstance(beam_size, int) or beam_size < 1:
        raise ValueError(
            f"`beam_size` must be a positive integer. Received: beam_size={beam_size}"
        )
    if isinstance(alpha, (int, float)) and alpha < 0:
        # A tensor alpha (a per-request value in a served graph) is checked by
        # its caller, in the graph.
        raise ValueError(
            "`alpha` must be >= 0: the early-termination bound assumes a length "
            f"penalty that grows with length. Received: alpha={alpha}"
        )
    check_one_of("early_stopping", early_stopping, EARLY_STOPPINGS)
    check_drop_done(drop_done)
    is_int = isinstance(max_length, int) and not isinstance(max_length, bool)
    if not (is_int and max_length >= 1) and not _is_int_scalar_tensor(max_length):
        raise ValueError(
            "`max_length` must be a positive integer (or a scalar int32 "
            f"tensor). Received: max_length={max_length}"
        )
    k = beam_size
    batch_size = ops.shape(initial_ids)[0]
    if max_lengths is None:
        max_lengths = ops.full((batch_size,), max_length, dtype="int32")
    max_lengths = ops.clip(ops.cast(max_lengths, "int32"), 1, max_length)
    sentences = {
        "max_lengths": max_lengths,
        # [B], the penalty at each sentence's maximum length, for the bound
        "max_penalty": length_penalty(max_lengths, alpha, length_normalization),
    }

    # [B] -> [B, K, 1], every beam starts from initial_ids
    start = ops.broadcast_to(
        ops.reshape(ops.cast(initial_ids, "int32"), (-1, 1, 1)), (batch_size, k, 1)
    )
    alive_seq = ops.full((batch_size, k, max_length + 1), pad_id, dtype="int32")
    alive_seq = ops.slice_update(alive_seq, [0, 0, 0], start)
    # Only beam 0 is real at first; the others would duplicate it.
    alive_log_probs = ops.tile(
        ops.convert_to_tensor([[0.0] + [NEG_INF] * (k - 1)], "float32"),
        (batch_size, 1),
    )
    finished_seq = ops.full((batch_size, k, max_length + 1), pad_id, dtype="int32")
    finished_scores = ops.full((batch_size, k), NEG_INF, dtype="float32")
    finished_flags = ops.zeros((batch_size, k), dtype="bool")
    done = ops.zeros((batch_size,), dtype="bool")
    # [B, ...] -> [B*K, ...]
    cache = tile_cache_fn(initial_cache, k)

    def cond(index, alive_seq, alive_log_probs, seq, scores, flags, done, *rest):
        return ops.logical_and(
            ops.less(index, max_length), ops.logical_not(ops.all(done))
        )

    def body(
        index,
        alive_seq,
        alive_log_probs,
        finished_seq,
        finished_scores,
        finished_flags,
        done,
        cache,
        sentences,
    ):
        # B: the sentences in the state (fewer than given with `drop_done`)
        batch_size = ops.shape(alive_log_probs)[0]
        max_lengths = sentences["max_lengths"]
        # [B, K, T + 1] -> [B, K, 1] -> [B*K, 1], the tokens at `index`
        current = ops.reshape(
            ops.slice(alive_seq, [0, 0, index], [batch_size, k, 1]), (-1, 1)
        )
        logits, cache = symbols_to_logits_fn(current, index, cache)
        # [B*K, (1,) V] -> [B, K, V]
        # (V spelled out when static: -1 with a run-time batch size would hide
        # it from `top_k_by_blocks`)
        logits = ops.reshape(
            ops.cast(logits, "float32"), (batch_size, k, logits.shape[-1] or -1)
        )
        # Grow: the best 2K one-token extensions, so that K survive even if K
        # end in eos. They are among the best 2K tokens of each beam, so only
        # those K * 2K get a log probability, logit - logsumexp (the full
        # [B, K*V] of log probs is never formed). Ties still resolve to the
        # lower (beam, token), as one top-k over [B, K*V] would.
        # [B, K, V] -> [B, K, N], N = 2K (or V, for a vocabulary under 2K)
        per_beam = min(2 * k, logits.shape[-1] or 2 * k)
        # [B, K, 1], the log-softmax's normalizer, over banned ids too
        normalizer = ops.logsumexp(logits, axis=-1, keepdims=True)
        if banned_ids:
            # [V], broadcast over [B, K, V]
            vocab = ops.arange(ops.shape(logits)[-1], dtype="int32")
            banned = ops.any(
                ops.equal(
                    ops.expand_dims(vocab, 1),
                    ops.convert_to_tensor(list(banned_ids), "int32"),
                ),
                axis=1,
            )
            logits = ops.where(banned, NEG_INF, logits)
        beam_logits, beam_tokens = top_k_by_blocks(logits, per_beam)
        beam_log_probs = beam_logits - normalizer
        # [B, K, 1] + [B, K, N] -> [B, K*N]
        candidate_log_probs = ops.reshape(
            ops.expand_dims(alive_log_probs, -1) + beam_log_probs, (batch_size, -1)
        )
        # [B, K*N] -> [B, 2K]
        topk_log_probs, topk_indices = ops.top_k(candidate_log_probs, 2 * k)
        topk_parents = topk_indices // per_beam
        topk_tokens = take_per_row(
            ops.reshape(beam_tokens, (batch_size, -1)), topk_indices
        )
        # [B, K, T + 1] -> [B, 2K, T + 1], then write the new token at index + 1
        topk_seq = take_per_row(alive_seq, topk_parents)
        topk_seq = ops.slice_update(
            topk_seq, [0, 0, index + 1], ops.expand_dims(topk_tokens, -1)
        )
        length = index + 1
        # [B, 1]: whether this step reaches each sentence's maximum length
        at_limit = ops.expand_dims(ops.greater_equal(length, max_lengths), 1)
        # [B, 2K]
        ends = ops.logical_or(ops.equal(topk_tokens, eos_id), at_limit)
        # Only the best K extensions may finish, as in a plain K-beam step;
        # the other K only refill the alive set (so K = 1 is greedy search).
        # [2K] -> [1, 2K]
        in_top_k = ops.expand_dims(ops.less(ops.arange(2 * k), k), 0)
        newly_finished = ops.logical_and(
            ops.logical_and(ends, in_top_k), is_valid(topk_log_probs)
        )
        # A done sentence's finished set is final. [B] -> [B, 1]
        newly_finished = ops.logical_and(
            newly_finished, ops.logical_not(ops.expand_dims(done, 1))
        )

        # Alive: the best K extensions that do not end here.
        # [B, 2K] -> [B, K]
        new_alive_log_probs, alive_picks = ops.top_k(
            ops.where(ends, NEG_INF, topk_log_probs), k
        )
        alive_seq = take_per_row(topk_seq, alive_picks)
        # [B, K] parents in the old alive set -> [B*K] rows of the cache
        alive_parents = take_per_row(topk_parents, alive_picks)
        cache = reorder_cache_fn(cache, flat_beam_indices(alive_parents))

        # Finished: merge the new ones, by length-penalised score.
        # [B, 2K], log P(y | x) / ((5 + |y|) / 6) ** alpha
        new_scores = ops.where(
            newly_finished,
            topk_log_probs / length_penalty(length, alpha, length_normalization),
            NEG_INF,
        )
        # [B, K] + [B, 2K] -> [B, 3K] -> [B, K]
        finished_scores, finished_picks = ops.top_k(
            ops.concatenate([finished_scores, new_scores], axis=1), k
        )
        finished_seq = take_per_row(
            ops.concatenate([finished_seq, topk_seq], axis=1), finished_picks
        )
        finished_flags = take_per_row(
            ops.concatenate([finished_flags, newly_finished], axis=1), finished_picks
        )
        done = ops.logical_or(
            done,
            sentences_done(
                early_stopping,
                new_alive_log_probs,
                finished_scores,
                finished_flags,
                length,
                sentences["max_penalty"],
                alpha,
                length_normalization,
            ),
        )
        return (
            index + 1,
            alive_seq,
            new_alive_log_probs,
            finished_seq,
            finished_scores,
            finished_flags,
            done,
            cache,
            sentences,
        )

    state = (
        ops.convert_to_tensor(0, "int32"),
        alive_seq,
        alive_log_probs,
        finished_seq,
        finished_scores,
        finished_flags,
        done,
        cache,
        sentences,
    )
    if drop_done:
        select_cache_fn = select_cache_fn or select_beam_rows
        state, results = start_dropping(state, select_cache_fn, k)

        def drop_body(*loop_state):
            *state, results = loop_state
            return drop_done_sentences(body(*state), results, select_cache_fn, k)

        *state, results = ops.while_loop(cond, drop_body, (*state, results))
        finished_seq, finished_scores, finished_flags = every_result(state, results)
    else:
        state = ops.while_loop(cond, body, state)
        _, _, _, finished_seq, finished_scores, finished_flags, _, _, _ = state
    # Every alive beam is finished by its sentence's limit, or stopped early
    # because it cannot beat the finished ones: the finished set is the answer.
    scores = ops.where(finished_flags, finished_scores, float("-inf"))
    return finished_seq[:, :, 1:], scores
