"""The Transformer with the next-word pointer (parsing, `NextWordPointer`)."""

import keras
import numpy as np
import pytest

from keras_transformer import Transformer, TransformerConfig, build_transformer
from tests.keras_transformer.decoding.conftest import make_tiny_model
from tests.keras_transformer.models.test_transformer import beam_step_options

# Source ids 4..11 begin a word, 12..19 continue one; target id 4 is the
# word symbol `XX` (5..7 open, 8..10 close, 11 of no class).
SOURCE_VOCAB, TARGET_VOCAB = 20, 12
WORD_STARTS, XX = list(range(4, 12)), 4
BOS = 2


def _model(window=0, encoder_window=0, **overrides):
    """A tiny pointer model; with `window` (`encoder_window`), mean pooling
    and the cross-attention (encoder) word-distance bias, its table random
    (it starts at zero, which biases nothing)."""
    arguments = dict(
        source_vocab_size=SOURCE_VOCAB,
        target_vocab_size=TARGET_VOCAB,
        shared_embeddings=False,
        next_word_pointer=True,
    )
    if window or encoder_window:
        arguments.update(
            next_word_pooling="mean",
            next_word_window=window,
            encoder_word_window=encoder_window,
        )
    arguments.update(overrides)
    model = make_tiny_model(**arguments)
    if model.pointer is not None:
        model.set_word_vocabularies(WORD_STARTS, [XX])
    rng = np.random.default_rng(3)
    for bias in (
        model.pointer.distance_bias if window else None,
        model.encoder_word_distance,
    ):
        if bias is not None:
            bias.table.assign(rng.normal(size=bias.table.shape).astype("float32"))
    return model


def _source():
    # Row 0: 4 words over 7 pieces; row 1: 2 words, then padding.
    return np.array(
        [[5, 12, 13, 6, 7, 14, 8], [9, 15, 10, 0, 0, 0, 0]],
        "int32",
    )


def _target(length=8, seed=1):
    """bos, then brackets and word symbols, about every other one `XX`: row 1
    has more word symbols than its source has words."""
    target = np.random.default_rng(seed).integers(5, TARGET_VOCAB, (2, length))
    target[:, 1::2] = XX
    target[1, 2] = XX
    target[:, 0] = BOS
    return target.astype("int32")


def _logits(model, source, target):
    return np.asarray(model({"source_ids": source, "target_ids": target}))


@pytest.mark.parametrize(
    "pooling, window, encoder_window",
    [("first", 0, 0), ("mean", 0, 0), ("mean", 2, 3)],
)
def test_cached_steps_with_a_word_counter_equal_teacher_forcing(
    pooling, window, encoder_window
):
    model = _model(window, encoder_window, next_word_pooling=pooling)
    source, target = _source(), _target()
    full = _logits(model, source, target)

    self_caches, encoder_cache = model.init_cache(
        *model.encode(source), max_length=target.shape[1], source_ids=source
    )
    words = np.zeros(2, "int32")  # word symbols among the inputs so far
    steps = []
    for i in range(target.shape[1]):
        ids = target[:, i : i + 1]
        next_word = model.pointer.next_word_index(ids, words_before=words)
        logits, self_caches = model.decode_step(
            ids, i, self_caches, encoder_cache, next_word_index=next_word
        )
        words = np.asarray(next_word)[:, 0]
        steps.append(np.asarray(logits))
    # The counter went past row 1's two words.
    assert words.tolist() == [4, 5]
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, atol=1e-5)


def test_cached_chunks_equal_teacher_forcing():
    model = _model()
    source, target = _source(), _target()
    full = _logits(model, source, target)
    self_caches, encoder_cache = model.init_cache(
        *model.encode(source), max_length=10, source_ids=source
    )
    first_ids, rest_ids = target[:, :5], target[:, 5:]
    first, self_caches = model.decode_step(
        first_ids,
        0,
        self_caches,
        encoder_cache,
        next_word_index=model.pointer.next_word_index(first_ids),
    )
    rest, _ = model.decode_step(
        rest_ids,
        5,
        self_caches,
        encoder_cache,
        next_word_index=model.pointer.next_word_index(
            rest_ids, words_before=model.pointer.word_symbol_counts(first_ids)
        ),
    )
    np.testing.assert_allclose(
        np.concatenate([np.asarray(first), np.asarray(rest)], axis=1), full, atol=1e-5
    )


def test_a_wrong_word_counter_changes_the_cached_logits():
    # The equalities above can fail: a counter one word ahead does not match.
    model = _model()
    source, target = _source(), _target()
    full = _logits(model, source, target)
    self_caches, encoder_cache = model.init_cache(
        *model.encode(source), max_length=8, source_ids=source
    )
    logits, _ = model.decode_step(
        target,
        0,
        self_caches,
        encoder_cache,
        next_word_index=model.pointer.next_word_index(
            target, words_before=np.ones(2, "int32")
        ),
    )
    assert not np.allclose(np.asarray(logits), full, atol=1e-3)


@pytest.mark.parametrize("share_beam_cache", [False, True])
def test_beam_rows_point_into_their_sentences_one_encoder_row(share_beam_cache):
    # With the distance bias: its rows are folded as the beams' queries.
    model = _model(window=2, encoder_window=3)
    beams, length = 3, 5
    source = _source()
    # [B*K, length]: a different target per beam row
    rng = np.random.default_rng(5)
    target = rng.integers(4, TARGET_VOCAB, (2 * beams, length)).astype("int32")
    target[:, 0] = BOS
    expected = _logits(model, np.repeat(source, beams, axis=0), target)

    self_caches, encoder_cache = model.init_cache(
        *model.encode(source),
        max_length=length * (beams if share_beam_cache else 1),
        source_ids=source,
    )
    if not share_beam_cache:
        self_caches = [
            tuple(np.repeat(c, beams, axis=0) for c in s) for s in self_caches
        ]
    words = np.zeros(2 * beams, "int32")
    steps = []
    for i in range(length):
        options = beam_step_options(2, beams, length, i, share_beam_cache)
        ids = target[:, i : i + 1]
        next_word = model.pointer.next_word_index(ids, words_before=words)
        logits, self_caches = model.decode_step(
            ids, i, self_caches, encoder_cache, next_word_index=next_word, **options
        )
        words = np.asarray(next_word)[:, 0]
        steps.append(np.asarray(logits))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), expected, atol=1e-5)


def test_decoding_without_the_pointers_inputs_is_refused():
    model = _model()
    source = _source()
    encoder_output, source_mask = model.encode(source)
    with pytest.raises(ValueError, match="Received: source_ids=None"):
        model.init_cache(encoder_output, source_mask, max_length=4)
    self_caches, encoder_cache = model.init_cache(
        encoder_output, source_mask, max_length=4, source_ids=source
    )
    with pytest.raises(ValueError, match="Received: next_word_index=None"):
        model.decode_step(np.full((2, 1), BOS, "int32"), 0, self_caches, encoder_cache)


def test_a_model_without_the_pointer_has_none():
    model = _model(next_word_pointer=False)
    assert model.pointer is None
    assert model.get_config()["next_word_pointer"] is False
    assert not any("next_word_pointer" in w.path for w in model.weights)
    with pytest.raises(ValueError, match="Received: next_word_pointer=False"):
        model.set_word_vocabularies(WORD_STARTS, [XX])
    # source_ids and next_word_index are not needed (and ignored).
    source = _source()
    self_caches, encoder_cache = model.init_cache(*model.encode(source), max_length=2)
    assert "pointer_memory" not in encoder_cache
    model.decode_step(np.full((2, 1), BOS, "int32"), 0, self_caches, encoder_cache)


def test_the_pointer_changes_the_logits():
    model = _model()
    source, target = _source(), _target()
    pointed = _logits(model, source, target)
    # Every piece a word start: the same steps point at other pieces.
    model.set_word_vocabularies(range(1, SOURCE_VOCAB), [XX])
    elsewhere = _logits(model, source, target)
    # Zero tables point at nothing: the pointer adds zero.
    model.pointer.word_starts.assign(np.zeros(SOURCE_VOCAB, "float32"))
    nothing = _logits(model, source, target)
    for a, b in ((pointed, elsewhere), (pointed, nothing), (elsewhere, nothing)):
        assert not np.allclose(a, b, atol=1e-3)
    # Position 0 (bos) points at word 0, the first piece under both tables.
    np.testing.assert_allclose(pointed[:, 0], elsewhere[:, 0], atol=1e-5)


@pytest.mark.parametrize("window, encoder_window", [(2, 0), (0, 3)])
def test_each_word_distance_bias_changes_the_logits(window, encoder_window):
    source, target = _source(), _target()
    plain_model = _model(next_word_pooling="mean")
    plain = _logits(plain_model, source, target)
    model = _model(window, encoder_window)
    # The same weights (the pointer is built earlier with the encoder's
    # bias, so its initial values differ), the table aside.
    weights = {w.path: w for w in model.weights}
    for weight in plain_model.weights:
        weights[weight.path].assign(weight)
    biased = _logits(model, source, target)
    assert not np.allclose(biased, plain, atol=1e-3)
    # At zero (its initial value) the bias leaves attention as it was.
    bias = model.pointer.distance_bias if window else model.encoder_word_distance
    bias.table.assign(np.zeros(bias.table.shape))
    np.testing.assert_allclose(_logits(model, source, target), plain, atol=1e-6)


def test_config_round_trip_keeps_the_pointer():
    model = _model(window=2, encoder_window=3)
    config = model.get_config()
    assert config["next_word_pointer"] is True
    rebuilt = Transformer.from_config(config)
    assert rebuilt.get_config() == config
    assert rebuilt.pointer is not None
    assert rebuilt.pointer.pooling == "mean"
    assert rebuilt.pointer.distance_window == 2
    assert rebuilt.pointer.num_heads == 2
    assert rebuilt.encoder_word_distance.window == 3
    # The config holds no tables: a rebuilt model starts with zeros.
    assert not np.any(np.asarray(rebuilt.pointer.word_starts))


def test_build_transformer_passes_the_option():
    config = TransformerConfig.from_preset(
        "base",
        num_layers=1,
        d_model=16,
        d_ff=32,
        num_heads=2,
        source_vocab_size=SOURCE_VOCAB,
        target_vocab_size=TARGET_VOCAB,
        shared_embeddings=False,
        next_word_pointer=True,
        next_word_pooling="mean",
        next_word_window=3,
        encoder_word_window=5,
    )
    model = build_transformer(config)
    assert model.pointer is not None
    assert model.get_config()["next_word_pointer"] is True
    assert model.pointer.pooling == "mean"
    assert model.pointer.distance_bias.table.shape == (2 * 3 + 2, 2)
    assert model.encoder_word_distance.table.shape == (2 * 5 + 2, 2)
    assert (
        build_transformer(
            TransformerConfig.from_preset(
                "base",
                num_layers=1,
                d_model=16,
                d_ff=32,
                num_heads=2,
                source_vocab_size=8,
            )
        ).pointer
        is None
    )


def test_weights_and_tables_round_trip_through_save_weights(tmp_path):
    model = _model(window=2, encoder_window=3)
    source, target = _source(), _target()
    expected = _logits(model, source, target)
    path = str(tmp_path / "pointer.weights.h5")
    model.save_weights(path)

    fresh = Transformer.from_config(model.get_config())
    fresh.load_weights(path)
    np.testing.assert_array_equal(
        np.asarray(fresh.pointer.word_starts), np.asarray(model.pointer.word_starts)
    )
    np.testing.assert_array_equal(
        np.asarray(fresh.pointer.word_symbols), np.asarray(model.pointer.word_symbols)
    )
    assert np.flatnonzero(np.asarray(fresh.pointer.word_symbols)).tolist() == [XX]
    np.testing.assert_array_equal(_logits(fresh, source, target), expected)


def test_keras_save_and_reload_keep_the_tables(tmp_path):
    model = _model(window=2, encoder_window=3)
    source, target = _source(), _target()
    path = tmp_path / "pointer.keras"
    model.save(path)
    reloaded = keras.saving.load_model(path)
    assert reloaded.get_config() == model.get_config()
    np.testing.assert_array_equal(
        _logits(reloaded, source, target), _logits(model, source, target)
    )


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"next_word_pointer": False}, "next_word_window=2, next_word_pointer=False"),
        ({"next_word_pooling": "first"}, "next_word_pooling='first'"),
    ],
)
def test_a_word_window_without_the_mean_pointer_is_refused(overrides, message):
    """The model checks its windows as `TransformerConfig` does (one check,
    `check_word_windows`), before it builds a layer."""
    with pytest.raises(ValueError, match=message):
        _model(window=2, **overrides)
