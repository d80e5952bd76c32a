import numpy as np
import pytest

from keras_transformer.layers import TransformerDecoderBlock
from tests.layer_check import run_layer_check


def _sequence(batch=2, length=5, dim=8, seed=0):
    return (
        np.random.default_rng(seed).normal(size=(batch, length, dim)).astype("float32")
    )


@pytest.mark.parametrize("normalize_first", [False, True])
def test_layer_check(tmp_path, normalize_first):
    source_mask = np.ones((2, 6), bool)
    source_mask[1, 4:] = False
    run_layer_check(
        TransformerDecoderBlock,
        {
            "num_heads": 2,
            "intermediate_dim": 16,
            "key_dim": 3,
            "value_dim": 5,
            "dropout": 0.1,
            "normalize_first": normalize_first,
        },
        {
            "decoder_sequence": _sequence(),
            "encoder_sequence": _sequence(length=6, seed=1),
            "encoder_padding_mask": source_mask,
        },
        expected_output_shape=(2, 5, 8),
        tmp_path=tmp_path,
    )


def test_causality():
    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=16)
    target, source = _sequence(), _sequence(length=6, seed=1)
    changed = target.copy()
    changed[:, 3:] = _sequence(length=2, seed=2)
    a, b = np.array(block(target, source)), np.array(block(changed, source))
    np.testing.assert_allclose(a[:, :3], b[:, :3], atol=1e-6)
    assert not np.allclose(a[:, 3:], b[:, 3:])


@pytest.mark.parametrize("normalize_first", [False, True])
def test_cached_decoding_reproduces_the_full_pass(normalize_first):
    block = TransformerDecoderBlock(
        num_heads=2,
        intermediate_dim=16,
        key_dim=3,
        value_dim=5,
        normalize_first=normalize_first,
    )
    target, source = _sequence(), _sequence(length=6, seed=1)
    source_mask = np.array([[True] * 6, [True] * 4 + [False] * 2])
    full = np.array(block(target, source, encoder_padding_mask=source_mask))
    cross_cache = block.cross_attention.compute_cache(source)
    self_cache = (np.zeros((2, 2, 5, 3), "float32"), np.zeros((2, 2, 5, 5), "float32"))
    steps = []
    for i in range(5):
        output, self_cache = block(
            target[:, i : i + 1],
            encoder_padding_mask=source_mask,
            self_attention_cache=self_cache,
            self_attention_cache_update_index=i,
            cross_attention_cache=cross_cache,
        )
        steps.append(np.array(output))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, atol=1e-5)


def test_source_padding_is_ignored():
    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=16)
    target, source = _sequence(), _sequence(length=3, seed=1)
    padded = np.concatenate([source, _sequence(length=4, seed=3)], axis=1)
    mask = np.array([[True] * 3 + [False] * 4] * 2)
    np.testing.assert_allclose(
        np.array(block(target, padded, encoder_padding_mask=mask)),
        np.array(block(target, source)),
        atol=1e-5,
    )


def test_attention_scores_shapes():
    output, self_scores, cross_scores = TransformerDecoderBlock(2, 16)(
        _sequence(), _sequence(length=6, seed=1), return_attention_scores=True
    )
    assert self_scores.shape == (2, 2, 5, 5)
    assert cross_scores.shape == (2, 2, 5, 6)
    # Causal: no weight above the diagonal.
    assert np.all(np.triu(np.array(self_scores), k=1) == 0.0)


def test_missing_encoder_input_is_an_error():
    with pytest.raises(ValueError, match="Received neither"):
        TransformerDecoderBlock(2, 16)(_sequence())


def test_cache_without_index_is_an_error():
    block = TransformerDecoderBlock(2, 16)
    cache = (np.zeros((2, 2, 5, 4), "float32"),) * 2
    with pytest.raises(ValueError, match="go together"):
        block(_sequence(), _sequence(seed=1), self_attention_cache=cache)


def test_self_attention_mask_needs_a_cache():
    block = TransformerDecoderBlock(2, 16)
    mask = np.ones((2, 3, 3), bool)
    with pytest.raises(ValueError, match="self_attention_cache=False"):
        block(_sequence(), _sequence(seed=1), self_attention_mask=mask)


@pytest.mark.parametrize("share_beam_cache", [False, True])
def test_beam_rows_over_one_cross_attention_row_equal_tiled_sentences(
    share_beam_cache,
):
    """`num_beams=K`: K decoder rows per sentence over its one cross-attention
    row (and, shared, one self-attention row with K slots per position)."""
    beams, length = 3, 4
    block = TransformerDecoderBlock(
        num_heads=2, intermediate_dim=16, key_dim=3, value_dim=5
    )
    # [B*K, T, D] targets; [B, S, D] sources, padding in the second
    target = _sequence(batch=2 * beams, length=length)
    source = _sequence(length=6, seed=1)
    source_mask = np.array([[True] * 6, [True] * 4 + [False] * 2])
    expected = np.array(
        block(
            target,
            np.repeat(source, beams, axis=0),
            encoder_padding_mask=np.repeat(source_mask, beams, axis=0),
        )
    )
    cross_cache = block.cross_attention.compute_cache(source)
    rows, slots = (2, length * beams) if share_beam_cache else (2 * beams, length)
    self_cache = (
        np.zeros((rows, 2, slots, 3), "float32"),
        np.zeros((rows, 2, slots, 5), "float32"),
    )
    steps = []
    for i in range(length):
        options = {}
        if share_beam_cache:
            # Beam k's positions 0..i are in slots p * K + k: [B, K, T * K]
            slot = np.arange(slots)
            mask = (slot % beams == np.arange(beams)[:, None]) & (slot // beams <= i)
            options = dict(
                share_beam_cache=True,
                self_attention_mask=np.broadcast_to(mask, (2, beams, slots)),
            )
        output, self_cache = block(
            target[:, i : i + 1],
            encoder_padding_mask=source_mask,
            self_attention_cache=self_cache,
            self_attention_cache_update_index=i,
            cross_attention_cache=cross_cache,
            num_beams=beams,
            **options,
        )
        steps.append(np.array(output))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), expected, atol=1e-5)


def test_num_beams_needs_a_cross_attention_cache():
    block = TransformerDecoderBlock(2, 16)
    with pytest.raises(ValueError, match="num_beams=2"):
        block(_sequence(), _sequence(seed=1), num_beams=2)


def test_share_beam_cache_needs_num_beams_and_a_mask():
    block = TransformerDecoderBlock(2, 16)
    block(_sequence(), _sequence(seed=1))
    cache = (np.zeros((2, 2, 5, 4), "float32"),) * 2
    cross_cache = block.cross_attention.compute_cache(_sequence(seed=1))
    with pytest.raises(ValueError, match="self_attention_mask=False"):
        block(
            _sequence(length=1),
            self_attention_cache=cache,
            self_attention_cache_update_index=0,
            cross_attention_cache=cross_cache,
            num_beams=1,
            share_beam_cache=True,
        )
