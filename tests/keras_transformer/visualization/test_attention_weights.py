import numpy as np
import pytest

from keras_transformer.visualization import attention_weights
from tests.keras_transformer.visualization.conftest import (
    NUM_HEADS,
    NUM_LAYERS,
    SOURCE_IDS,
    TARGET_IDS,
)

SOURCE_REAL = SOURCE_IDS != 0  # [B, S]
TARGET_REAL = TARGET_IDS != 0  # [B, T]


@pytest.fixture(scope="module")
def weights(model):
    return attention_weights(model, SOURCE_IDS, TARGET_IDS)


def test_shapes_and_dtype(weights):
    (batch, source_length), target_length = SOURCE_IDS.shape, TARGET_IDS.shape[1]
    expected = {
        "encoder": (batch, NUM_HEADS, source_length, source_length),
        "decoder": (batch, NUM_HEADS, target_length, target_length),
        "cross": (batch, NUM_HEADS, target_length, source_length),
    }
    assert sorted(weights) == sorted(expected)
    for kind, shape in expected.items():
        assert len(weights[kind]) == NUM_LAYERS
        for layer in weights[kind]:
            assert isinstance(layer, np.ndarray)
            assert layer.dtype == np.float32
            assert layer.shape == shape


@pytest.mark.parametrize("kind", ["encoder", "decoder", "cross"])
def test_rows_are_distributions(weights, kind):
    for layer in weights[kind]:
        assert (layer >= 0).all()
        np.testing.assert_allclose(layer.sum(-1), 1.0, atol=1e-5)


def test_source_padding_gets_exactly_zero(weights):
    # [B, S] -> [B, 1, 1, S]: the padded keys of sentence 1.
    padded_keys = ~SOURCE_REAL[:, None, None, :]
    for kind in ("encoder", "cross"):
        for layer in weights[kind]:
            assert (np.broadcast_to(padded_keys, layer.shape) <= (layer == 0)).all()
            assert (layer[1, ..., 4:] == 0).all()


def test_decoder_sees_no_future_and_no_target_padding(weights):
    target_length = TARGET_IDS.shape[1]
    future = np.triu(np.ones((target_length, target_length), bool), k=1)
    for layer in weights["decoder"]:
        assert (layer[..., future] == 0).all()
        assert (layer[1, ..., 3:] == 0).all()
        assert (layer[..., ~future] > 0).any()


def test_inference_mode_is_deterministic(model, weights):
    # The model has dropout 0.1; inference mode must not apply it.
    again = attention_weights(model, SOURCE_IDS, TARGET_IDS)
    for kind in weights:
        for first, second in zip(weights[kind], again[kind], strict=True):
            np.testing.assert_array_equal(first, second)


def _softmax_attention(x, attention, key_mask):
    """softmax(Q K^T / sqrt(d_k)) recomputed with numpy from the layer's kernels."""
    query_dense, key_dense = attention._query_dense, attention._key_dense
    # [B, S, D] x [D, H, d_k] -> [B, S, H, d_k]
    query = np.einsum("bsd,dhk->bshk", x, np.array(query_dense.kernel))
    query += np.array(query_dense.bias)
    key = np.einsum("bsd,dhk->bshk", x, np.array(key_dense.kernel))
    key += np.array(key_dense.bias)
    # [B, T, H, d_k] x [B, S, H, d_k] -> [B, H, T, S]
    logits = np.einsum("bthk,bshk->bhts", query, key) / np.sqrt(query.shape[-1])
    logits = np.where(key_mask[:, None, None, :], logits, -np.inf)
    logits -= logits.max(-1, keepdims=True)
    probabilities = np.exp(logits)
    return probabilities / probabilities.sum(-1, keepdims=True)


def test_encoder_weights_match_a_numpy_recomputation(model, weights):
    # Second path: each block's input from the model's own layers, then the
    # §3.2.1 formula by hand (post-norm, so the attention reads the input as is).
    x = model.source_embedding(SOURCE_IDS)
    x = np.array(x + model.encoder_position(x))
    for block, layer in zip(model.encoder_blocks, weights["encoder"], strict=True):
        expected = _softmax_attention(x, block.self_attention, SOURCE_REAL)
        np.testing.assert_allclose(layer, expected, atol=1e-5)
        x = np.array(block(x, padding_mask=SOURCE_REAL))


def test_decoder_weights_match_the_cached_decode_path(model, weights):
    # Second path: the incremental decoder of beam search, one token at a time.
    target_length = TARGET_IDS.shape[1]
    encoder_output, source_mask = model.encode(SOURCE_IDS)
    self_caches, encoder_cache = model.init_cache(
        encoder_output, source_mask, target_length
    )
    for t in range(target_length):
        _, self_caches, step = model.decode_step(
            TARGET_IDS[:, t : t + 1],
            t,
            self_caches,
            encoder_cache,
            return_attention_scores=True,
        )
        # The cached path has no target padding mask, so padded rows may differ.
        real = TARGET_REAL[:, t]
        for i in range(NUM_LAYERS):
            # [B, H, 1, T] and [B, H, 1, S] against row t of the full pass.
            np.testing.assert_allclose(
                np.array(step["decoder"][i])[real, :, 0],
                weights["decoder"][i][real, :, t],
                atol=1e-5,
            )
            np.testing.assert_allclose(
                np.array(step["cross"][i])[real, :, 0],
                weights["cross"][i][real, :, t],
                atol=1e-5,
            )


def test_decode_step_without_scores_is_unchanged(model):
    encoder_output, source_mask = model.encode(SOURCE_IDS)
    self_caches, encoder_cache = model.init_cache(encoder_output, source_mask, 3)
    outputs = model.decode_step(TARGET_IDS[:, :1], 0, self_caches, encoder_cache)
    assert len(outputs) == 2


def test_not_a_transformer():
    with pytest.raises(ValueError, match="model=object"):
        attention_weights(object(), SOURCE_IDS, TARGET_IDS)


@pytest.mark.parametrize(
    "source_ids,target_ids,message",
    [
        (SOURCE_IDS[0], TARGET_IDS, r"source_ids.shape=\(6,\)"),
        (SOURCE_IDS, TARGET_IDS[:1], r"target_ids.shape=\(1, 5\)"),
        (SOURCE_IDS, TARGET_IDS * 1.0, "target_ids.dtype=float64"),
        (SOURCE_IDS, TARGET_IDS[:, :0], r"target_ids.shape=\(2, 0\)"),
    ],
)
def test_bad_ids(model, source_ids, target_ids, message):
    with pytest.raises(ValueError, match=message):
        attention_weights(model, source_ids, target_ids)
