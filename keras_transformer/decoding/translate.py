"""Glue between a `Transformer` and the search functions: encode once, then one
cached decoder step per token; beam rows share one encoder output row per sentence."""

from keras import ops

from keras_transformer.decoding.beam_search import NEG_INF, beam_search
from keras_transformer.decoding.greedy_search import greedy_search
from keras_transformer.decoding.growing_loop import segment_ends
from keras_transformer.decoding.length_penalty import length_penalty
from keras_transformer.decoding.sampling_search import sampling_search

METHODS = ("beam", "greedy", "sample")
PAD_ID = 0


def _grow_self_caches(self_caches, length):
    """Pads each `(keys, values)` `[B, H, L, d]` with zeros to `length` positions."""

    def grow(x):
        # [B, H, L, d] -> [B, H, length, d]
        return ops.pad(x, [[0, 0], [0, 0], [0, length - x.shape[2]], [0, 0]])

    return [(grow(keys), grow(values)) for keys, values in self_caches]


def output_lengths(source_ids, max_extra_length, max_length=None, model=None):
    """The decoding buffer size and each sentence's output limit (paper §6.1).

    "We set the maximum output length during inference to input length + 50."

    Args:
        source_ids: int tensor `[B, S]`, 0 for padding; S must be static
            unless `max_length` is given.
        max_extra_length: int. Tokens allowed beyond the source length.
        max_length: optional int. The buffer size T. Defaults to
            `S + max_extra_length`.
        model: optional `Transformer`. With learned positions, T is capped at
            its `max_sequence_length` (there are no embeddings beyond it).

    Returns:
        A tuple `(T, max_lengths)`: the static buffer size and an int32 `[B]`
        tensor, source length + `max_extra_length` clipped to `[1, T]`.
    """
    if max_length is None:
        width = source_ids.shape[1]
        if width is None:
            raise ValueError(
                "The source width must be static to derive `max_length`; pass "
                f"`max_length`. Received: source_ids.shape={source_ids.shape}"
            )
        max_length = int(width) + max_extra_length
    if getattr(model, "position_encoding", None) == "learned":
        max_length = min(max_length, model.max_sequence_length)
    # [B, S] -> [B], the number of real source tokens
    source_lengths = ops.sum(ops.cast(ops.not_equal(source_ids, 0), "int32"), axis=1)
    max_lengths = ops.clip(source_lengths + max_extra_length, 1, max_length)
    return max_length, max_lengths


def _decoder_step(model, static, ids, index, self_caches, self_attention_mask=None):
    """One cached decoder step: `(logits [B, 1, V], new self-attention caches)`.

    Only the self-attention keys and values are loop state; the encoder side
    stays in `static`.
    """
    cache = {
        "source_padding_mask": static["source_padding_mask"],
        "layers": [
            {"self_attention": s, "cross_attention": c}
            for s, c in zip(self_caches, static["cross_attention"], strict=True)
        ],
    }
    logits, cache = model.decode_step(
        ids, cache, index, self_attention_mask=self_attention_mask
    )
    # Padding is never generated: it only ever follows eos, so outputs
    # stay unambiguous (and the model, trained to ignore it, has no
    # meaningful probability for it). [V] -> broadcast over [B, 1, V]
    is_pad = ops.equal(ops.arange(ops.shape(logits)[-1]), PAD_ID)
    logits = ops.where(is_pad, NEG_INF, logits)
    return logits, [layer["self_attention"] for layer in cache["layers"]]


def _cached_step(model, static):
    """`symbols_to_logits_fn` over the model's decoder, one cache row per row."""

    def symbols_to_logits_fn(ids, index, self_caches):
        return _decoder_step(model, static, ids, index, self_caches)

    return symbols_to_logits_fn


def _beam_shared_step(model, static, beam_size):
    """`symbols_to_logits_fn` over a beam-shared self-attention cache.

    The search state is `{"self": caches, "history": [B*K, L] int32}`: each
    sentence's K beams write their keys and values into one cache row per
    sentence, slot `p * K + k` for position p of beam row k (see
    `CachedMultiHeadAttention`), and `history[r, p]` is the slot k (the
    sentence's beam row that wrote it) holding position p of beam r's
    hypothesis (-1: not decoded yet). A
    step records the new position as the beam's own slot and attends through
    the mask `history` makes; reordering beams gathers `history` rows only
    (`_reorder_history`), never the keys and values.
    """
    k = beam_size

    def symbols_to_logits_fn(ids, index, state):
        rows = ops.shape(ids)[0]
        # [B*K] -> [B*K, 1]: position `index` of beam row r is in slot r % K
        own = ops.expand_dims(ops.mod(ops.arange(rows, dtype="int32"), k), 1)
        history = ops.slice_update(state["history"], [0, index], own)
        length = history.shape[1]
        # [B*K, L, 1] == [K] -> [B*K, L, K] -> [B, K, L*K], slot p*K + j
        mask = ops.equal(ops.expand_dims(history, -1), ops.arange(k, dtype="int32"))
        mask = ops.reshape(mask, (-1, k, length * k))
        logits, caches = _decoder_step(
            model, static, ids, index, state["self"], self_attention_mask=mask
        )
        return logits, {"self": caches, "history": history}

    return symbols_to_logits_fn


def _reorder_history(state, flat_indices):
    """`beam_search`'s reorder for `_beam_shared_step`: the history rows only."""
    return {
        "self": state["self"],
        "history": ops.take(state["history"], flat_indices, axis=0),
    }


def _grow_beam_shared(state, length):
    """Grows `_beam_shared_step`'s state to `length` positions (K slots each)."""
    history = state["history"]
    k = state["self"][0][0].shape[2] // history.shape[1]
    history = ops.pad(
        history, [[0, 0], [0, length - history.shape[1]]], constant_values=-1
    )
    return {"self": _grow_self_caches(state["self"], length * k), "history": history}


def translate(
    model,
    source_ids,
    bos_id=2,
    eos_id=3,
    method="beam",
    beam_size=4,
    alpha=0.6,
    max_extra_length=50,
    max_length=None,
    temperature=1.0,
    top_k=0,
    seed=None,
    first_segment=None,
    share_beam_cache=True,
):
    """Translates a batch of token ids with the model's cached decoder.

    The encoder runs once. Its output (the projected cross-attention keys and
    values and the source mask) stays out of the search state with one row per
    sentence, even for beam search, whose K beam rows per sentence attend to
    that one row; by default the decoder self-attention cache is shared the
    same way (`share_beam_cache`), so beams are reordered without moving keys
    or values.

    Args:
        model: a `Transformer` (anything with `encode`, `init_cache` and
            `decode_step`).
        source_ids: int tensor `[B, S]`, 0 for padding.
        bos_id: int. The first decoder input. Defaults to `2`.
        eos_id: int. End of sentence. Defaults to `3`.
        method: `"beam"`, `"greedy"` or `"sample"`. Defaults to `"beam"`.
        beam_size: int. K for beam search (paper: 4). Defaults to `4`.
        alpha: float. Length penalty exponent (paper: 0.6), used by beam
            search and for the returned scores of every method. Defaults to
            `0.6`.
        max_extra_length: int. Each sentence generates at most its source
            length + this many tokens (paper: 50). Defaults to `50`.
        max_length: optional int. Buffer size T. Defaults to
            `S + max_extra_length`.
        temperature: float. For `"sample"`. Defaults to `1.0`.
        top_k: int. For `"sample"`; 0 means the whole vocabulary. Defaults to
            `0`.
        seed: int or `keras.random.SeedGenerator`. For `"sample"`.
        first_segment: int or `None`. If given (8 is a good start), the
            self-attention cache starts with this many positions and doubles
            when the search reaches its end (`growing_while_loop`), so early
            steps attend over, and beam search reorders, a short cache. On a
            2-core CPU that made beam 4 over 40 tokens 4-10% faster but
            tracing, compiling, exporting and loading about 2.5x slower (one
            loop per segment; BUILD_NOTES.md, "Speed"). `None` allocates all
            T positions at once. Defaults to `None`.
        share_beam_cache: bool. For beam search: the K beams of a sentence
            share one self-attention cache row with K slots per position and
            each beam's history is recorded apart (`_beam_shared_step`), so
            reordering beams moves no keys or values, while attention reads
            all K * T slots of the sentence through a mask. `False` keeps one
            cache row per beam and gathers the rows of the surviving beams
            every step. Same results; on a 2-core CPU, beam 4 over 40 tokens
            took 1.55 s instead of 1.93 s under XLA and the same time in graph
            mode (BUILD_NOTES.md, "Speed"). Defaults to `True`.

    Returns:
        A tuple `(ids, scores)`: int32 `[B, N, T]` hypotheses, best first
        (tokens, eos, then padding), and float32 `[B, N]` scores
        `log P(y | x) / ((5 + |y|) / 6) ** alpha`, `|y|` counting eos. N is
        `beam_size` for beam search and 1 otherwise.

    Example:

    >>> ids, scores = translate(model, source_ids, method="beam", beam_size=4)
    >>> best = ids[:, 0]  # [B, T]
    """
    if method not in METHODS:
        raise ValueError(
            f"`method` must be one of {METHODS}. Received: method={method}"
        )
    source_ids = ops.convert_to_tensor(source_ids, "int32")
    max_length, max_lengths = output_lengths(
        source_ids, max_extra_length, max_length, model
    )
    encoder_output, source_mask = model.encode(source_ids)
    # The cache starts at the first segment's length (and grows in the
    # search) or at T.
    cache_length = segment_ends(max_length, first_segment)[0]
    # A shared beam cache has K slots per position (one row per sentence, see
    # `_beam_shared_step`).
    shared = method == "beam" and share_beam_cache
    slots = beam_size if shared else 1
    cache = model.init_cache(encoder_output, source_mask, cache_length * slots)
    static = {
        "source_padding_mask": cache["source_padding_mask"],
        "cross_attention": [layer["cross_attention"] for layer in cache["layers"]],
    }
    self_caches = [layer["self_attention"] for layer in cache["layers"]]
    batch_size = ops.shape(source_ids)[0]
    initial_ids = ops.full((batch_size,), bos_id, dtype="int32")
    growth = dict(
        grow_cache_fn=_grow_self_caches if first_segment else None,
        first_segment=first_segment,
    )

    if method == "beam" and not shared:
        # The encoder side stays [B, ...]: the K beam rows of a sentence
        # attend to its one cross-attention cache row (see
        # `CachedMultiHeadAttention`); the self-attention cache is tiled to
        # one row per beam and reordered with the beams.
        return beam_search(
            _cached_step(model, static),
            initial_ids,
            self_caches,
            beam_size=beam_size,
            alpha=alpha,
            eos_id=eos_id,
            max_length=max_length,
            max_lengths=max_lengths,
            **growth,
        )
    if method == "beam":
        # One cache row per sentence on both sides: the K beam rows of a
        # sentence attend to its cross-attention row and share one
        # self-attention row of K slots per position, so nothing is tiled
        # and reordering beams moves no keys or values (`_beam_shared_step`).
        state = {
            "self": self_caches,
            "history": ops.full((batch_size * beam_size, cache_length), -1, "int32"),
        }
        return beam_search(
            _beam_shared_step(model, static, beam_size),
            initial_ids,
            state,
            beam_size=beam_size,
            alpha=alpha,
            eos_id=eos_id,
            max_length=max_length,
            max_lengths=max_lengths,
            grow_cache_fn=_grow_beam_shared if first_segment else None,
            first_segment=first_segment,
            tile_cache_fn=lambda state, k: state,
            reorder_cache_fn=_reorder_history,
        )
    if method == "greedy":
        ids, log_probs = greedy_search(
            _cached_step(model, static),
            initial_ids,
            self_caches,
            eos_id=eos_id,
            max_length=max_length,
            max_lengths=max_lengths,
            return_scores=True,
            **growth,
        )
    else:
        ids, log_probs = sampling_search(
            _cached_step(model, static),
            initial_ids,
            self_caches,
            eos_id=eos_id,
            max_length=max_length,
            temperature=temperature,
            top_k=top_k,
            seed=seed,
            max_lengths=max_lengths,
            **growth,
        )
    # [B, T] -> [B]: eos position + 1, or the sentence's limit without eos
    is_eos = ops.equal(ids, eos_id)
    lengths = ops.where(
        ops.any(is_eos, axis=1),
        ops.cast(ops.argmax(ops.cast(is_eos, "int32"), axis=1), "int32") + 1,
        max_lengths,
    )
    scores = log_probs / length_penalty(lengths, alpha)
    # [B, T] -> [B, 1, T] and [B] -> [B, 1]
    return ops.expand_dims(ids, 1), ops.expand_dims(scores, 1)


def greedy_translate(model, source_ids, bos_id, eos_id, max_length):
    """Greedy translation of a batch of token ids with the model's cached decoder.

    Args:
        model: a `Transformer`.
        source_ids: int tensor `[B, S]`, 0 for padding.
        bos_id: int. The first decoder input.
        eos_id: int. End of sentence.
        max_length: int. Tokens to decode at most, for every sentence (the
            paper uses source length + 50, §6.1; see `translate`).

    Returns:
        int tensor `[B, max_length]`: tokens, eos, then padding.
    """
    source_ids = ops.convert_to_tensor(source_ids, "int32")
    encoder_output, source_mask = model.encode(source_ids)
    cache = model.init_cache(encoder_output, source_mask, max_length)
    static = {
        "source_padding_mask": cache["source_padding_mask"],
        "cross_attention": [layer["cross_attention"] for layer in cache["layers"]],
    }
    batch_size = ops.shape(source_ids)[0]
    return greedy_search(
        _cached_step(model, static),
        ops.full((batch_size,), bos_id, dtype="int32"),
        [layer["self_attention"] for layer in cache["layers"]],
        eos_id=eos_id,
        max_length=max_length,
    )
