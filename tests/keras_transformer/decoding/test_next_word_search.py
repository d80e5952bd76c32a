"""Searches with the next-word pointer: the word counter each row carries
(`next_word_search`) gives the logits teacher forcing gives.

Each hypothesis a search returns is re-scored by the uncached model, fed
`[bos] + hypothesis` as its decoder inputs (the pointer then counts the word
symbols with a cumulative sum): the search's score must be that log
probability over the length penalty. A counter off by one word at any step
after a word symbol changes the logits there, and so the score.
"""

import numpy as np
import pytest
from keras import ops

from keras_transformer.decoding import (
    DecodingConfig,
    compiled_translate,
    length_penalty,
    translate,
)
from keras_transformer.decoding.bracket_constraint import BracketConstraint
from keras_transformer.decoding.next_word_search import next_word_search
from keras_transformer.decoding.translate import output_lengths
from tests.keras_transformer.decoding.conftest import BOS_ID, EOS_ID, make_tiny_model
from tests.markers import tensorflow_only

# Source ids 4..11 begin a word, 12..19 continue one. Target ids: 4 is the
# word symbol `XX`, 5..7 open and 8..10 close brackets, 11 is of no class.
SOURCE_VOCAB, TARGET_VOCAB = 20, 12
WORD_STARTS = list(range(4, 12))
XX, OPENS, CLOSES = 4, [5, 6, 7], [8, 9, 10]
ALPHA = 0.6


def _pointer_model():
    model = make_tiny_model(
        source_vocab_size=SOURCE_VOCAB,
        target_vocab_size=TARGET_VOCAB,
        shared_embeddings=False,
        next_word_pointer=True,
        # the parsing recipe's pooling and cross-attention distance bias
        # (random: it starts at zero); the encoder's bias runs once per
        # sentence, outside the steps (tested in
        # tests/keras_transformer/models/test_next_word_pointer_model.py)
        next_word_pooling="mean",
        next_word_window=2,
    )
    model.set_word_vocabularies(WORD_STARTS, [XX])
    table = model.pointer.distance_bias.table
    table.assign(np.random.default_rng(3).normal(size=table.shape).astype("float32"))
    # Random weights rarely emit the word symbol (or eos) on some backends'
    # initializations: shift the last decoder layer's output so that their
    # logits gain about 2 and 1.5 (the projection is the target embedding),
    # and hypotheses have word symbols and varied lengths.
    embeddings = np.asarray(model.target_embedding.embeddings)
    shift = np.linalg.lstsq(embeddings[[XX, EOS_ID]], [2.0, 1.5], rcond=None)[0]
    beta = model.decoder_blocks[-1].feed_forward_norm.beta
    beta.assign(np.asarray(beta) + shift.astype("float32"))
    return model


@pytest.fixture(scope="module")
def pointer_model():
    return _pointer_model()


def _sources():
    """Five sentences of 1 to 4 words, in pieces of 1 to 3, one padded."""
    return np.array(
        [
            [5, 12, 13, 6, 7, 14, 8],
            [9, 10, 11, 4, 0, 0, 0],
            [6, 15, 16, 17, 0, 0, 0],
            [4, 18, 5, 19, 12, 7, 0],
            [11, 10, 9, 8, 0, 0, 0],
        ],
        "int32",
    )


def _word_counts(source):
    return np.isin(source, WORD_STARTS).sum(axis=1).astype("int32")


def _constraint(matching=False):
    return BracketConstraint(
        TARGET_VOCAB,
        word_ids=[XX],
        open_ids=OPENS,
        close_ids=CLOSES,
        eos_id=EOS_ID,
        matching_close_ids=CLOSES if matching else None,
    )


def _teacher_forced_scores(
    model, source, ids, max_extra_length, constraint=None, word_counts=None
):
    """`[B, N]`: each hypothesis' log probability under the uncached model
    over the length penalty (NaN for empty beam slots), and a bool `[B, N]`
    whether each token is the most probable one (what greedy search picks).

    As the search: padding never generated, and under a constraint each
    step renormalised over the tokens it allows.
    """
    batch, n, width = ids.shape
    rows = ids.reshape(batch * n, width)
    # [B*N, T]: the decoder inputs, bos then the hypothesis shifted right
    inputs = np.concatenate([np.full((len(rows), 1), BOS_ID), rows[:, :-1]], 1)
    inputs = inputs.astype("int32")
    sources = np.repeat(source, n, axis=0)
    logits = np.asarray(model({"source_ids": sources, "target_ids": inputs}))
    logits = logits.astype("float64")
    logits[..., 0] = -np.inf
    if constraint is not None:
        _, max_lengths = output_lengths(source, max_extra_length, width)
        state = constraint.initial_state(
            np.repeat(word_counts, n), np.repeat(np.asarray(max_lengths), n), width
        )
        for i in range(width):
            state = constraint.advance(state, inputs[:, i])
            allowed = np.asarray(constraint.allowed(state, i))
            logits[:, i] = np.where(allowed, logits[:, i], -np.inf)
    log_probs = logits - np.logaddexp.reduce(logits, axis=-1, keepdims=True)
    # Eos included; pad is never generated, so the real tokens are the non-pad.
    lengths = (rows != 0).sum(1)
    real = np.arange(width) < lengths[:, None]
    picked = np.take_along_axis(log_probs, rows[..., None], axis=-1)[..., 0]
    total = np.where(real, picked, 0.0).sum(1)
    scores = total / np.asarray(length_penalty(lengths, ALPHA))
    is_best = np.where(real, rows == logits.argmax(-1), True).all(1)
    scores = np.where(lengths > 0, scores, np.nan)
    return scores.reshape(batch, n), is_best.reshape(batch, n)


def _check_scores(scores, expected):
    scores = np.asarray(scores)
    valid = scores > -1e8  # empty beam slots score NEG_INF
    assert valid[:, 0].all()
    np.testing.assert_allclose(scores[valid], expected[valid], rtol=1e-4, atol=1e-4)


def _word_symbols_before_the_end(ids):
    """Hypotheses with a word symbol before their last token: the counter
    is read after it."""
    ids = ids.reshape(-1, ids.shape[-1])
    lengths = (ids != 0).sum(1)
    return sum(
        int(np.any(row[: length - 1] == XX))
        for row, length in zip(ids, lengths, strict=True)
    )


CONFIGS = {
    "greedy": DecodingConfig(method="greedy", max_extra_length=6),
    "sample": DecodingConfig(method="sample", max_extra_length=6),
    "beam-shared": DecodingConfig(beam_size=3, max_extra_length=6),
    "beam-per-row": DecodingConfig(
        beam_size=3, max_extra_length=6, share_beam_cache=False
    ),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_search_scores_equal_teacher_forcing(pointer_model, name):
    config = CONFIGS[name]
    source = _sources()
    ids, scores = translate(pointer_model, source, config, seed=5)
    ids = np.asarray(ids)
    expected, is_best = _teacher_forced_scores(
        pointer_model, source, ids, config.max_extra_length
    )
    _check_scores(scores, expected)
    if config.method == "greedy":
        assert is_best.all()
    # Not vacuous: the counter is read after word symbols.
    assert _word_symbols_before_the_end(ids) >= 2


@pytest.mark.parametrize("matching", [False, True], ids=["free", "matched"])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_constrained_search_scores_equal_teacher_forcing(pointer_model, name, matching):
    config = CONFIGS[name]
    source = _sources()
    counts = _word_counts(source)
    assert counts.tolist() == [4, 4, 1, 3, 4]
    constraint = _constraint(matching)
    ids, scores = translate(
        pointer_model,
        source,
        config,
        seed=5,
        constraint=constraint,
        word_counts=counts,
    )
    ids = np.asarray(ids)
    valid = np.asarray(scores) > -1e8
    # One word symbol per source word in every hypothesis.
    np.testing.assert_array_equal(
        np.where(valid, (ids == XX).sum(-1), counts[:, None]),
        np.broadcast_to(counts[:, None], valid.shape),
    )
    expected, is_best = _teacher_forced_scores(
        pointer_model,
        source,
        ids,
        config.max_extra_length,
        constraint=constraint,
        word_counts=counts,
    )
    _check_scores(scores, expected)
    if config.method == "greedy":
        assert is_best.all()


@pytest.mark.parametrize("constrained", [False, True])
def test_shared_and_per_row_beam_caches_agree(pointer_model, constrained):
    source = _sources()
    options = {}
    if constrained:
        options = {"constraint": _constraint(), "word_counts": _word_counts(source)}
    shared, per_row = (
        translate(
            pointer_model,
            source,
            DecodingConfig(beam_size=4, max_extra_length=6, share_beam_cache=share),
            **options,
        )
        for share in (True, False)
    )
    np.testing.assert_array_equal(np.asarray(shared[0]), np.asarray(per_row[0]))
    np.testing.assert_allclose(
        np.asarray(shared[1]), np.asarray(per_row[1]), rtol=1e-5, atol=1e-5
    )


def test_rescoring_without_the_counter_does_not_match():
    # The re-scoring can fail: with the word symbols not counted (the pointer
    # stuck at word 0 in the uncached model), greedy's scores do not match.
    model = _pointer_model()
    source = _sources()
    config = CONFIGS["greedy"]
    ids, scores = translate(model, source, config)
    ids = np.asarray(ids)
    model.pointer.word_symbols.assign(np.zeros(TARGET_VOCAB, "float32"))
    expected, _ = _teacher_forced_scores(model, source, ids, config.max_extra_length)
    assert not np.allclose(np.asarray(scores), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "config",
    [CONFIGS["beam-shared"], CONFIGS["beam-per-row"], CONFIGS["greedy"]],
    ids=["beam-shared", "beam-per-row", "greedy"],
)
def test_compiled_pointer_search_equals_eager(pointer_model, config):
    # The counter in the loop state of a tf.function (no XLA) or jax.jit.
    source = _sources()
    counts = _word_counts(source)
    constraint = _constraint()
    eager = translate(
        pointer_model, source, config, constraint=constraint, word_counts=counts
    )
    fn = compiled_translate(
        pointer_model, config, jit_compile=False, constraint=constraint
    )
    compiled = fn(source, counts)
    np.testing.assert_array_equal(np.asarray(compiled[0]), np.asarray(eager[0]))
    np.testing.assert_allclose(
        np.asarray(compiled[1]), np.asarray(eager[1]), rtol=1e-4, atol=1e-5
    )


def test_next_word_search_counts_the_step_inputs():
    model = _pointer_model()
    seen = []

    def step_fn(ids, index, state, next_word_index=None):
        seen.append(np.asarray(next_word_index).tolist())
        return ops.zeros((ops.shape(ids)[0], 1, TARGET_VOCAB)), state + 1

    step, state = next_word_search(model, step_fn, 0, rows=2)
    # Inputs per step, [R, 1] as the searches pass them: bos, then XX / (NP,
    # XX / XX, then )NP / XX.
    for index, ids in enumerate([[BOS_ID, BOS_ID], [XX, 6], [XX, XX], [9, XX]]):
        ids = ops.convert_to_tensor([[i] for i in ids], "int32")
        _, state = step(ids, index, state)
    assert seen == [[[0], [0]], [[1], [0]], [[2], [1]], [[2], [2]]]
    assert state["search"] == 4

    # Without the pointer: unchanged.
    plain = make_tiny_model()
    assert next_word_search(plain, step_fn, "state", rows=2) == (step_fn, "state")


@tensorflow_only("A run-time batch and buffer size need TensorFlow graph mode.")
@pytest.mark.parametrize("share_beam_cache", [False, True])
def test_run_time_batch_and_buffer(pointer_model, share_beam_cache):
    # As the exported parser runs it: one trace for every batch, the
    # counters sized by a batch (times beams) known at run time only.
    import tensorflow as tf

    config = DecodingConfig(
        beam_size=3, max_extra_length=3, share_beam_cache=share_beam_cache
    )
    constraint = _constraint(matching=True)

    @tf.function(
        input_signature=[
            tf.TensorSpec([None, None], tf.int32),
            tf.TensorSpec([None], tf.int32),
        ]
    )
    def search(source, counts):
        return translate(
            pointer_model,
            source,
            config,
            max_length=tf.shape(source)[1] + 3,
            constraint=constraint,
            word_counts=counts,
        )

    for source in (_sources(), _sources()[2:, :4]):
        counts = _word_counts(source)
        ids, scores = search(source, counts)
        expected_ids, expected_scores = translate(
            pointer_model, source, config, constraint=constraint, word_counts=counts
        )
        np.testing.assert_array_equal(np.asarray(ids), np.asarray(expected_ids))
        np.testing.assert_allclose(
            np.asarray(scores), np.asarray(expected_scores), rtol=1e-5, atol=1e-5
        )
    assert search.experimental_get_tracing_count() == 1
