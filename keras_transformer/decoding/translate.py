"""Glue between a `Transformer` and the search functions (paper §6.1): encode
once, then one cached decoder step per token; beam rows share one encoder
output row per sentence."""

from keras import ops

from keras_transformer.decoding.beam_search import beam_search
from keras_transformer.decoding.bracket_constraint import (
    constrained_search,
    tree_length_limit,
)
from keras_transformer.decoding.decoder_steps import (
    beam_shared_state,
    beam_shared_step,
    cached_step,
    reorder_history,
    row_step,
    select_sentences,
)
from keras_transformer.decoding.decoding_config import DecodingConfig
from keras_transformer.decoding.greedy_search import greedy_search
from keras_transformer.decoding.in_place_cache import owned_caches, writes_in_place
from keras_transformer.decoding.length_penalty import length_penalty
from keras_transformer.decoding.next_word_search import next_word_search
from keras_transformer.decoding.sampling_search import sampling_search
from keras_transformer.models import BOS_ID, EOS_ID, PAD_ID


def check_decoding_config(config):
    """Returns the search settings of `translate` and its callers.

    Args:
        config: a `DecodingConfig`, or `None` for `DecodingConfig()` (the
            paper's beam search, §6.1).

    Returns:
        A `DecodingConfig`. Anything else raises a `TypeError` (e.g. a
        `bos_id` passed where the config goes, as `translate` took it before).
    """
    if config is None:
        return DecodingConfig()
    if not isinstance(config, DecodingConfig):
        raise TypeError(
            "`config` must be a `DecodingConfig` (`bos_id`, `eos_id`, "
            "`max_length` and `seed` are keyword arguments). "
            f"Received: config={config!r}"
        )
    return config


def output_lengths(source_ids, max_extra_length, max_length=None, model=None):
    """The decoding buffer size and each sentence's output limit (paper §6.1).

    "We set the maximum output length during inference to input length + 50."

    Args:
        source_ids: int tensor `[B, S]`, 0 for padding; S must be static
            unless `max_length` is given.
        max_extra_length: int, or a scalar int tensor when `max_length` is
            given. Tokens allowed beyond the source length.
        max_length: optional int, or a scalar int32 tensor (TensorFlow
            graph mode: a buffer sized per batch, as the exported
            translator's). The buffer size T. Defaults to
            `S + max_extra_length`.
        model: optional `Transformer`. With learned positions, T is capped at
            its `max_sequence_length` (there are no embeddings beyond it).

    Returns:
        A tuple `(T, max_lengths)`: the buffer size (an int, or the scalar
        tensor given) and an int32 `[B]` tensor, source length +
        `max_extra_length` clipped to `[1, T]`.
    """
    if max_length is None:
        width = source_ids.shape[1]
        if width is None:
            raise ValueError(
                "The source width must be static to derive `max_length`; pass "
                f"`max_length`. Received: source_ids.shape={source_ids.shape}"
            )
        if not isinstance(max_extra_length, int):
            raise ValueError(
                "A tensor `max_extra_length` needs a static `max_length`. "
                f"Received: max_extra_length={max_extra_length}"
            )
        max_length = int(width) + max_extra_length
    if getattr(model, "position_encoding", None) == "learned":
        if isinstance(max_length, int):
            max_length = min(max_length, model.max_sequence_length)
        else:
            max_length = ops.minimum(max_length, model.max_sequence_length)
    # [B, S] -> [B], the number of real source tokens
    source_lengths = ops.sum(
        ops.cast(ops.not_equal(source_ids, PAD_ID), "int32"), axis=1
    )
    max_lengths = ops.clip(source_lengths + max_extra_length, 1, max_length)
    return max_length, max_lengths


def translate(
    model,
    source_ids,
    config=None,
    *,
    bos_id=BOS_ID,
    eos_id=EOS_ID,
    max_length=None,
    seed=None,
    constraint=None,
    word_counts=None,
):
    """Translates a batch of token ids with the model's cached decoder.

    The encoder runs once. Its output (the projected cross-attention keys and
    values and the source mask, `init_cache`'s encoder cache) keeps one row
    per sentence, even for beam search, whose K beam rows per sentence attend
    to that one row; it is search state only where beam search may drop done
    sentences (the shared beam cache below). With
    `config.share_beam_cache` (the default) the decoder self-attention cache
    is shared the same way: the K beams of a sentence share one cache row with
    K slots per position and each beam's history is recorded apart
    (`beam_shared_step`), so reordering beams moves no keys or values, while
    attention reads all K * T slots of the sentence through a mask. Otherwise
    there is one cache row per beam, gathered every step. Same results; the
    shared cache is faster under XLA on CPU (no gather of the caches) and as
    fast in graph mode (figures in docs/experiment-log.md,
    "Decoding speed and the search's design").

    Args:
        model: a `Transformer` (anything with `encode`, `init_cache` taking
            `source_ids=` and `decode_step`; a `pointer` attribute, if any,
            is the `NextWordPointer` the search counts words for).
        source_ids: int tensor `[B, S]`, 0 for padding.
        config: a `DecodingConfig`: the method, beam size, length penalty
            alpha (used by beam search and for the returned scores of every
            method), `max_extra_length` (each sentence generates at most its
            source length + this many tokens), sampling's `temperature` and
            `top_k`, and beam search's `share_beam_cache`, `early_stopping`
            and `pad_in_softmax`. `alpha` and `max_extra_length`
            may be scalar tensors (checked by the caller; a tensor
            `max_extra_length` needs `max_length`). `n_best` is not read:
            all N hypotheses are returned. Defaults to `DecodingConfig()`,
            the paper's beam search (§6.1).
        bos_id: int. The first decoder input. Defaults to `BOS_ID` (2).
        eos_id: int. End of sentence. Defaults to `EOS_ID` (3).
        max_length: optional int. Buffer size T. Defaults to
            `S + config.max_extra_length`. Beam search also takes a scalar
            int32 tensor in TensorFlow graph mode (not under XLA, which needs
            static shapes): the exported translator sizes its buffer per
            request.
        seed: int or `keras.random.SeedGenerator`, for `"sample"`.
        constraint: optional `BracketConstraint`: every hypothesis is a
            well-formed linearized tree with `word_counts` word symbols
            (parsing, §6.3).
        word_counts: int `[B]`, the words of each sentence; needed with
            `constraint`.

    Returns:
        A tuple `(ids, scores)`: int32 `[B, N, T]` hypotheses, best first
        (tokens, eos, then padding), and float32 `[B, N]` scores
        `log P(y | x) / ((5 + |y|) / 6) ** alpha`, `|y|` counting eos. N is
        `config.num_hypotheses`: the beam size for beam search, 1 otherwise.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §6.1.
        - [Wu et al., 2016. Google's Neural Machine Translation System: Bridging the Gap
          between Human and Machine Translation](https://arxiv.org/abs/1609.08144), §7
          (Eq. 14, the length penalty).

    Examples:
        >>> ids, scores = translate(model, source_ids, DecodingConfig(beam_size=4))
        >>> best = ids[:, 0]  # [B, T]
    """
    config = check_decoding_config(config)
    if config.constrain_brackets and constraint is None:
        raise ValueError(
            "`constrain_brackets=True` searches linearized trees (parsing) and "
            "needs a `BracketConstraint`. Received: constraint=None"
        )
    source_ids = ops.convert_to_tensor(source_ids, "int32")
    max_length, max_lengths = output_lengths(
        source_ids, config.max_extra_length, max_length, model
    )
    if constraint is not None and word_counts is not None:
        # A tree needs at most `tree_length_limit` symbols: the tighter limit.
        limits = tree_length_limit(
            ops.cast(ops.convert_to_tensor(word_counts), "int32")
        )
        max_lengths = ops.minimum(max_lengths, limits)
    encoder_output, source_mask = model.encode(source_ids)
    # A shared beam cache has K slots per position (one row per sentence, see
    # `beam_shared_step`).
    beam_size = config.beam_size
    shared = config.method == "beam" and config.share_beam_cache
    slots = beam_size if shared else 1
    self_caches, encoder_cache = model.init_cache(
        encoder_output, source_mask, max_length * slots, source_ids=source_ids
    )
    # In a TensorFlow graph the search writes its own copies of the
    # self-attention caches in place (`in_place_cache`).
    with owned_caches(self_caches) as self_caches:
        batch_size = ops.shape(source_ids)[0]
        initial_ids = ops.full((batch_size,), bos_id, dtype="int32")
        # Arguments every beam search below shares. With `pad_in_softmax` the
        # step leaves pad's logit and the search bans it after its softmax.
        pad_in_softmax = config.method == "beam" and config.pad_in_softmax
        beam = dict(
            beam_size=beam_size,
            alpha=config.alpha,
            length_normalization=config.length_normalization,
            early_stopping=config.early_stopping,
            banned_ids=(PAD_ID,) if pad_in_softmax else (),
            eos_id=eos_id,
            max_length=max_length,
            max_lengths=max_lengths,
            pad_id=PAD_ID,
        )

        if config.method == "beam" and not shared:
            # The encoder side stays [B, ...]: the K beam rows of a sentence
            # attend to its one cross-attention cache row (see
            # `CachedMultiHeadAttention`); the self-attention cache is tiled to
            # one row per beam and reordered with the beams.
            step, state = constrained_search(
                constraint,
                word_counts,
                max_lengths,
                *next_word_search(
                    model,
                    cached_step(model, encoder_cache, beam_size, pad_in_softmax),
                    self_caches,
                    rows=batch_size,
                ),
                rows_per_count=1,
                buffer_length=max_length,
            )
            return beam_search(step, initial_ids, state, **beam)
        if config.method == "beam":
            # One cache row per sentence on both sides: the K beam rows of a
            # sentence attend to its cross-attention row and share one
            # self-attention row of K slots per position, so nothing is tiled
            # and reordering beams moves no keys or values (`beam_shared_step`).
            # In a TensorFlow graph outside XLA the search drops done
            # sentences from its state (`drop_done`, run-time shapes).
            step, state = constrained_search(
                constraint,
                word_counts,
                max_lengths,
                *next_word_search(
                    model,
                    beam_shared_step(model, beam_size, pad_in_softmax),
                    beam_shared_state(
                        self_caches, encoder_cache, beam_size, max_length
                    ),
                    rows=batch_size * beam_size,
                ),
                rows_per_count=beam_size,
                buffer_length=max_length,
            )
            return beam_search(
                step,
                initial_ids,
                state,
                **beam,
                tile_cache_fn=lambda state, k: state,
                reorder_cache_fn=reorder_history,
                drop_done=writes_in_place(),
                select_cache_fn=select_sentences,
            )
        step, state = constrained_search(
            constraint,
            word_counts,
            max_lengths,
            *next_word_search(
                model,
                row_step(model),
                {"self": self_caches, "encoder": encoder_cache},
                batch_size,
            ),
            rows_per_count=1,
            buffer_length=max_length,
        )
        if config.method == "greedy":
            # In a TensorFlow graph outside XLA finished sentences leave.
            ids, log_probs = greedy_search(
                step,
                initial_ids,
                state,
                eos_id=eos_id,
                max_length=max_length,
                pad_id=PAD_ID,
                max_lengths=max_lengths,
                return_scores=True,
                drop_done=writes_in_place(),
            )
        else:
            ids, log_probs = sampling_search(
                step,
                initial_ids,
                state,
                eos_id=eos_id,
                max_length=max_length,
                temperature=config.temperature,
                top_k=config.top_k,
                seed=seed,
                pad_id=PAD_ID,
                max_lengths=max_lengths,
            )
        # [B, T] -> [B]: eos position + 1, or the sentence's limit without eos
        is_eos = ops.equal(ids, eos_id)
        lengths = ops.where(
            ops.any(is_eos, axis=1),
            ops.cast(ops.argmax(ops.cast(is_eos, "int32"), axis=1), "int32") + 1,
            max_lengths,
        )
        scores = log_probs / length_penalty(
            lengths, config.alpha, config.length_normalization
        )
        # [B, T] -> [B, 1, T] and [B] -> [B, 1]
        return ops.expand_dims(ids, 1), ops.expand_dims(scores, 1)
