"""`symbols_to_logits_fn`s over a `Transformer`'s cached decoder, for the
searches of `translate` (paper §6.1): one cache row per row, or one per
sentence shared by its K beam rows.

Notation: B batch, K beams, L the decoding buffer, V vocabulary.
"""

from keras import ops

from keras_transformer.decoding.beam_stopping import NEG_INF
from keras_transformer.decoding.beam_utils import gather_beams
from keras_transformer.models import PAD_ID


def decoder_step(
    model, ids, index, self_caches, encoder_cache, pad_in_softmax=False, **options
):
    """One cached decoder step: `(logits [B, 1, V], new self-attention caches)`.

    The self-attention keys and values change at every step; the encoder side
    (`encoder_cache`) does not (`cached_step` keeps it out of the loop state,
    `beam_shared_step` carries it so that done sentences can leave with
    their rows). `options` are `decode_step`'s
    `num_beams`, `share_beam_cache`, `self_attention_mask` and, for a model
    with the next-word pointer, `next_word_index` (`next_word_search`).
    Pad's logit is left for beam search to ban after its softmax with
    `pad_in_softmax` (`DecodingConfig`).
    """
    logits, self_caches = model.decode_step(
        ids, index, self_caches, encoder_cache, **options
    )
    if pad_in_softmax:
        return logits, self_caches
    # Padding is never generated: it only ever follows eos, so outputs
    # stay unambiguous (and the model, trained to ignore it, has no
    # meaningful probability for it). [V] -> broadcast over [B, 1, V]
    is_pad = ops.equal(ops.arange(ops.shape(logits)[-1]), PAD_ID)
    return ops.where(is_pad, NEG_INF, logits), self_caches


def cached_step(model, encoder_cache, num_beams=None, pad_in_softmax=False):
    """`symbols_to_logits_fn` over the model's decoder, one cache row per row.

    With `num_beams=K` the rows are `B*K` beam rows over the encoder cache's
    one row per sentence.
    """

    def symbols_to_logits_fn(ids, index, self_caches, next_word_index=None):
        return decoder_step(
            model,
            ids,
            index,
            self_caches,
            encoder_cache,
            pad_in_softmax=pad_in_softmax,
            num_beams=num_beams,
            next_word_index=next_word_index,
        )

    return symbols_to_logits_fn


def row_step(model):
    """`symbols_to_logits_fn` over the state `{"self": caches, "encoder":
    encoder cache}`, one row of each per sentence (greedy and sampling
    search): the encoder cache is state so that a search dropping finished
    sentences drops their rows."""

    def symbols_to_logits_fn(ids, index, state, next_word_index=None):
        return _state_step(model, ids, index, state, next_word_index=next_word_index)

    return symbols_to_logits_fn


def _state_step(model, ids, index, state, **options):
    """`decoder_step` over a state carrying the encoder cache: `(logits, the
    state with the new keys and values)`."""
    logits, caches = decoder_step(
        model, ids, index, state["self"], state["encoder"], **options
    )
    return logits, {**state, "self": caches}


def beam_shared_step(model, beam_size, pad_in_softmax=False):
    """`symbols_to_logits_fn` over a beam-shared self-attention cache.

    The search state is `{"self": caches, "encoder": encoder cache,
    "history": [B*K, L] int32}` (`beam_shared_state`): each sentence's K
    beams write their keys and values into one cache row per sentence, slot
    `p * K + k` for position p of beam row k (see `CachedMultiHeadAttention`),
    and `history[r, p]` is the slot k (the sentence's beam row that wrote it)
    holding position p of beam r's hypothesis (-1: not decoded yet). A step
    records the new position as the beam's own slot and attends through the
    mask `history` makes; reordering beams gathers `history` rows only
    (`reorder_history`), never the keys and values. The encoder cache, one
    row per sentence, is state so that a search dropping done sentences
    drops their rows (`select_sentences`).
    """
    k = beam_size

    def symbols_to_logits_fn(ids, index, state, next_word_index=None):
        rows = ops.shape(ids)[0]
        # [B*K] -> [B*K, 1]: position `index` of beam row r is in slot r % K
        own = ops.expand_dims(ops.mod(ops.arange(rows, dtype="int32"), k), 1)
        history = ops.slice_update(state["history"], [0, index], own)
        # T: static, or a run-time buffer size (`translate`'s `max_length`)
        length = history.shape[1] or ops.shape(history)[1]
        # [B*K, L, 1] == [K] -> [B*K, L, K] -> [B, K, L*K], slot p*K + j
        mask = ops.equal(ops.expand_dims(history, -1), ops.arange(k, dtype="int32"))
        mask = ops.reshape(mask, (-1, k, length * k))
        return _state_step(
            model,
            ids,
            index,
            {**state, "history": history},
            pad_in_softmax=pad_in_softmax,
            num_beams=k,
            share_beam_cache=True,
            self_attention_mask=mask,
            next_word_index=next_word_index,
        )

    return symbols_to_logits_fn


def beam_shared_state(self_caches, encoder_cache, beam_size, buffer_length):
    """The initial state of `beam_shared_step`.

    Args:
        self_caches: `init_cache`'s self-attention caches for `T * K` slots.
        encoder_cache: its encoder cache.
        beam_size: int. K.
        buffer_length: int or scalar int tensor. T, the positions.
    """
    batch_size = ops.shape(encoder_cache["source_padding_mask"])[0]
    return {
        "self": self_caches,
        "encoder": encoder_cache,
        # [B*K, T], -1: not decoded yet
        "history": ops.full((batch_size * beam_size, buffer_length), -1, "int32"),
    }


# The keys of a `beam_shared_state` (wherever it sits in a search's state)
# whose leaves have one row per sentence; all others have one per beam.
_PER_SENTENCE = ("self", "encoder")


def reorder_history(state, flat_indices):
    """`beam_search`'s reorder for `beam_shared_step`: every row of the state
    (the history, and the counters of `BracketConstraint` and
    `next_word_search` wrapped around it) but the shared keys and values and
    the encoder cache."""
    if isinstance(state, dict):
        return {
            key: value if key in _PER_SENTENCE else reorder_history(value, flat_indices)
            for key, value in state.items()
        }
    return gather_beams(state, flat_indices)


def select_sentences(state, sentences, flat_indices):
    """`beam_search`'s `select_cache_fn` for `beam_shared_step` (with
    `drop_done`): rows `sentences` `[B']` of the keys and values and the
    encoder cache, rows `flat_indices` `[B'*K]` of everything else."""
    if isinstance(state, dict):
        return {
            key: gather_beams(value, sentences)
            if key in _PER_SENTENCE
            else select_sentences(value, sentences, flat_indices)
            for key, value in state.items()
        }
    return gather_beams(state, flat_indices)
