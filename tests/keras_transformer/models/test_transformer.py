import keras
import numpy as np
import pytest

from keras_transformer import Transformer, TransformerConfig, build_transformer

VOCAB = 31


def _model(**overrides):
    config = TransformerConfig.from_preset(
        "base",
        **{
            "num_layers": 2,
            "d_model": 16,
            "d_ff": 32,
            "num_heads": 2,
            "source_vocab_size": VOCAB,
            "max_position_length": 32,
            **overrides,
        },
    )
    return build_transformer(config)


def _ids(batch, length, seed):
    return (
        np.random.default_rng(seed).integers(1, VOCAB, (batch, length)).astype("int32")
    )


def _logits(model, source, target):
    return np.array(model({"source_ids": source, "target_ids": target}))


VARIANTS = {
    "base": {},
    "pre_norm": {"normalize_first": True},
    "learned_positions": {"position_encoding": "learned"},
    "separate_vocabularies": {"shared_embeddings": False, "target_vocab_size": 23},
    "untied_softmax": {"tie_output_embeddings": False},
    "dk_ne_dv": {"d_k": 4, "d_v": 12},
    "deep_encoder_shallow_decoder": {"num_encoder_layers": 3, "num_layers": 1},
}


def test_inputs_outputs_and_shapes():
    model = _model()
    assert sorted(model.input.keys()) == ["source_ids", "target_ids"]
    logits = model({"source_ids": _ids(2, 7, 0), "target_ids": _ids(2, 5, 1)})
    assert tuple(logits.shape) == (2, 5, VOCAB)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_causality(variant):
    model = _model(**VARIANTS[variant])
    source, target = _ids(2, 7, 0), _ids(2, 6, 1)
    vocab = model.target_vocab_size
    target %= vocab - 1
    target += 1
    changed = target.copy()
    changed[:, 4:] = (changed[:, 4:] % (vocab - 1)) + 1  # different, non-pad
    a, b = _logits(model, source, target), _logits(model, source, changed)
    np.testing.assert_allclose(a[:, :4], b[:, :4], atol=1e-5)
    assert not np.allclose(a[:, 4:], b[:, 4:], atol=1e-5)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_source_padding_leaves_logits_unchanged(variant):
    model = _model(**VARIANTS[variant])
    source, target = _ids(2, 7, 0), _ids(2, 5, 1) % 20 + 1
    padded = np.concatenate([source, np.zeros((2, 9), "int32")], axis=1)
    np.testing.assert_allclose(
        _logits(model, padded, target), _logits(model, source, target), atol=1e-5
    )


def test_batch_with_different_source_lengths_matches_single_examples():
    model = _model()
    short, long = _ids(1, 3, 0), _ids(1, 8, 1)
    batch = np.zeros((2, 8), "int32")
    batch[0, :3], batch[1] = short[0], long[0]
    target = _ids(2, 4, 2)
    logits = _logits(model, batch, target)
    np.testing.assert_allclose(logits[:1], _logits(model, short, target[:1]), atol=1e-5)
    np.testing.assert_allclose(logits[1:], _logits(model, long, target[1:]), atol=1e-5)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_cached_decoder_reproduces_full_decoder(variant):
    model = _model(**VARIANTS[variant])
    source = _ids(2, 7, 0)
    source[1, 5:] = 0  # padding in the second source
    target = _ids(2, 6, 1) % (model.target_vocab_size - 1) + 1
    full = _logits(model, source, target)

    encoder_output, source_mask = model.encode(source)
    self_caches, encoder_cache = model.init_cache(
        encoder_output, source_mask, max_length=6
    )
    steps = []
    for i in range(6):
        logits, self_caches = model.decode_step(
            target[:, i : i + 1], i, self_caches, encoder_cache
        )
        assert logits.dtype == "float32"
        steps.append(np.array(logits))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, atol=1e-5)


def test_decode_step_accepts_chunks():
    model = _model()
    source, target = _ids(2, 7, 0), _ids(2, 6, 1)
    full = _logits(model, source, target)
    self_caches, encoder_cache = model.init_cache(*model.encode(source), max_length=8)
    first, self_caches = model.decode_step(target[:, :4], 0, self_caches, encoder_cache)
    rest, _ = model.decode_step(target[:, 4:], 4, self_caches, encoder_cache)
    np.testing.assert_allclose(np.concatenate([first, rest], axis=1), full, atol=1e-5)


@pytest.mark.parametrize("share_beam_cache", [False, True])
def test_beam_rows_over_one_encoder_row_equal_tiled_sentences(share_beam_cache):
    """`num_beams=K`: the K beam rows of a sentence read its one encoder-cache
    row (and, shared, one self-attention row with K slots per position)."""
    model = _model()
    beams, length = 3, 4
    source = _ids(2, 7, 0)
    source[1, 5:] = 0
    # [B*K, length]: a different target per beam row
    target = _ids(2 * beams, length, 1)
    tiled = np.repeat(source, beams, axis=0)
    expected = _logits(model, tiled, target)

    self_caches, encoder_cache = model.init_cache(
        *model.encode(source), max_length=length * (beams if share_beam_cache else 1)
    )
    if not share_beam_cache:
        # [B, ...] -> [B*K, ...], one self-attention row per beam row
        self_caches = [
            tuple(np.repeat(c, beams, axis=0) for c in s) for s in self_caches
        ]
    steps = []
    for i in range(length):
        options = beam_step_options(2, beams, length, i, share_beam_cache)
        logits, self_caches = model.decode_step(
            target[:, i : i + 1], i, self_caches, encoder_cache, **options
        )
        steps.append(np.array(logits))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), expected, atol=1e-5)


def beam_step_options(batch, beams, length, i, share_beam_cache):
    """`decode_step`'s beam arguments for position i: K beam rows per
    sentence, and with a shared cache the slots each beam row attends to
    (beam k's positions 0..i are in slots p * K + k: [B, K, L * K])."""
    options = {"num_beams": beams}
    if share_beam_cache:
        slots = np.arange(length * beams)
        mask = (slots % beams == np.arange(beams)[:, None]) & (slots // beams <= i)
        options.update(
            share_beam_cache=True,
            self_attention_mask=np.broadcast_to(mask, (batch, beams, length * beams)),
        )
    return options


def test_cache_layout_is_batch_then_heads_first():
    model = _model(d_k=4, d_v=12)
    self_caches, encoder_cache = model.init_cache(
        *model.encode(_ids(3, 7, 0)), max_length=10
    )
    assert tuple(encoder_cache["source_padding_mask"].shape) == (3, 7)
    assert len(self_caches) == len(encoder_cache["cross_attention"]) == 2
    keys, values = self_caches[0]
    assert (tuple(keys.shape), tuple(values.shape)) == ((3, 2, 10, 4), (3, 2, 10, 12))
    keys, values = encoder_cache["cross_attention"][0]
    assert (tuple(keys.shape), tuple(values.shape)) == ((3, 2, 7, 4), (3, 2, 7, 12))


def test_encoder_and_decoder_share_the_models_weights():
    model = _model()
    source = _ids(2, 7, 0)
    before, _ = model.encode(source)
    for weight in model.encoder_blocks[0].weights:
        weight.assign(weight * 0.5)
    after, _ = model.encode(source)
    assert not np.allclose(np.array(before), np.array(after))
    shared = model.get_layer("shared_embedding")
    assert shared is model.source_embedding is model.target_embedding


def test_keras_save_and_reload_give_identical_outputs(tmp_path):
    model = _model(position_encoding="learned", normalize_first=True)
    source, target = _ids(2, 7, 0), _ids(2, 5, 1)
    path = tmp_path / "transformer.keras"
    model.save(path)
    reloaded = keras.saving.load_model(path)
    assert isinstance(reloaded, Transformer)
    assert reloaded.get_config() == model.get_config()
    np.testing.assert_array_equal(
        _logits(reloaded, source, target), _logits(model, source, target)
    )


def test_mixed_bfloat16_keeps_float32_logits_and_variables():
    keras.config.set_dtype_policy("mixed_bfloat16")
    model = _model()
    logits = model({"source_ids": _ids(2, 7, 0), "target_ids": _ids(2, 5, 1)})
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    assert all(w.dtype == "float32" for w in model.weights)
    self_caches, _ = model.init_cache(*model.encode(_ids(2, 7, 0)), max_length=4)
    assert keras.backend.standardize_dtype(self_caches[0][0].dtype) == "bfloat16"


def test_a_bfloat16_model_keeps_its_policy_through_its_config():
    # What `--compute-dtype bfloat16` builds: bfloat16 weights and caches,
    # float32 logits; the functional model itself names the policy, so a
    # model rebuilt from its config is bfloat16 too.
    config = TransformerConfig.from_preset(
        "base", num_layers=1, d_model=16, d_ff=32, num_heads=2, source_vocab_size=VOCAB
    )
    model = build_transformer(config, dtype="bfloat16")
    rebuilt = Transformer.from_config(model.get_config())
    for m in (model, rebuilt):
        assert (m.compute_dtype, m.variable_dtype) == ("bfloat16", "bfloat16")
        assert {w.dtype for w in m.weights} == {"bfloat16"}
    logits = model({"source_ids": _ids(2, 7, 0), "target_ids": _ids(2, 5, 1)})
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    # The global policy is what a model built without `dtype` gets.
    assert build_transformer(config).compute_dtype == "float32"


def test_one_fit_step_reduces_the_loss():
    model = _model(dropout=0.0)
    source, target = _ids(8, 7, 0), _ids(8, 6, 1)
    inputs = {"source_ids": source, "target_ids": target[:, :-1]}
    model.compile(
        optimizer=keras.optimizers.Adam(1e-2),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    # As compile_transformer does: one trace of the train step, not two.
    model.optimizer.build(model.trainable_variables)
    history = model.fit(inputs, target[:, 1:], epochs=5, batch_size=8, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0]


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"source_vocab_size": 0}, "source_vocab_size=0"),
        ({"source_vocab_size": 10, "num_layers": 0}, "num_layers=0"),
        ({"source_vocab_size": 10, "num_encoder_layers": 0}, "num_encoder_layers=0"),
        ({"source_vocab_size": 10, "position_encoding": "rope"}, "'rope'"),
        ({"source_vocab_size": 10, "target_vocab_size": 12}, "target_vocab_size=12"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Transformer(**kwargs)
