import keras
import numpy as np
import pytest
from keras import ops

from keras_transformer.layers import CachedMultiHeadAttention
from keras_transformer.layers.attention_masks import causal_attention_mask
from keras_transformer.layers.masked_softmax import masked_softmax
from tests.gradients import value_and_gradients
from tests.layer_check import run_layer_check


def _inputs(batch=2, target=4, source=5, dim=8):
    rng = np.random.default_rng(0)
    query = rng.normal(size=(batch, target, dim)).astype("float32")
    value = rng.normal(size=(batch, source, dim)).astype("float32")
    return query, value


def test_layer_check(tmp_path):
    query, value = _inputs()
    run_layer_check(
        CachedMultiHeadAttention,
        {"num_heads": 2, "key_dim": 3, "value_dim": 5},
        {"query": query, "value": value},
        expected_output_shape=(2, 4, 8),
        tmp_path=tmp_path,
    )


def _reference_attention(layer, query, value, mask=None, bias=0.0):
    """Eq. (1) and §3.2.2 in numpy, from the layer's own weights (`bias`
    `[B, H, T, S]` added to the scaled scores)."""
    wq, bq = (np.array(w) for w in layer.query_dense.weights)
    wk, bk = (np.array(w) for w in layer.key_dense.weights)
    wv, bv = (np.array(w) for w in layer.value_dense.weights)
    wo, bo = (np.array(w) for w in layer.output_dense.weights)
    q = np.einsum("btd,dhk->bthk", query, wq) + bq
    k = np.einsum("bsd,dhk->bshk", value, wk) + bk
    v = np.einsum("bsd,dhk->bshk", value, wv) + bv
    scores = np.einsum("bthk,bshk->bhts", q, k) / np.sqrt(q.shape[-1]) + bias
    if mask is not None:
        scores = np.where(mask[:, None], scores, -1e9)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    heads = np.einsum("bhts,bshk->bthk", weights, v)
    return np.einsum("bthk,hkd->btd", heads, wo) + bo


@pytest.mark.parametrize("key_dim,value_dim", [(4, 4), (3, 5)])
def test_matches_equation_1(key_dim, value_dim):
    query, value = _inputs()
    mask = np.ones((2, 4, 5), bool)
    mask[1, :, 3:] = False  # padding in the second source
    layer = CachedMultiHeadAttention(num_heads=2, key_dim=key_dim, value_dim=value_dim)
    output = np.array(layer(query, value, attention_mask=mask))
    np.testing.assert_allclose(
        output, _reference_attention(layer, query, value, mask), atol=1e-5
    )


def test_attention_bias_is_added_to_the_scaled_scores():
    query, value = _inputs()
    mask = np.ones((2, 4, 5), bool)
    mask[1, :, 3:] = False
    bias = np.random.default_rng(1).normal(size=(2, 2, 4, 5)).astype("float32")
    layer = CachedMultiHeadAttention(num_heads=2, key_dim=4)
    output = np.array(layer(query, value, attention_mask=mask, attention_bias=bias))
    np.testing.assert_allclose(
        output, _reference_attention(layer, query, value, mask, bias), atol=1e-5
    )
    assert not np.allclose(output, _reference_attention(layer, query, value, mask))


def test_attention_scores_rows_sum_to_one_and_respect_mask():
    query, value = _inputs()
    mask = np.ones((2, 4, 5), bool)
    mask[:, :, -1] = False
    layer = CachedMultiHeadAttention(num_heads=2, key_dim=4)
    _, scores = layer(query, value, attention_mask=mask, return_attention_scores=True)
    scores = np.array(scores)
    assert scores.shape == (2, 2, 4, 5)
    np.testing.assert_allclose(scores.sum(-1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(scores[..., -1], 0.0)


def _softmax_inputs():
    rng = np.random.default_rng(3)
    scores = rng.normal(0.0, 3.0, size=(2, 2, 4, 5)).astype("float32")
    upstream = rng.normal(size=(2, 2, 4, 5)).astype("float32")
    mask = rng.random((2, 1, 4, 5)) < 0.6
    mask[0, 0, 1] = False  # a row with nothing to attend to
    mask[1, 0, 2] = True
    return scores, upstream, mask


@pytest.mark.parametrize("mode", ["eager", "graph", "xla"])
def test_masked_softmax_equals_keras_softmax_and_its_gradient(mode):
    scores, upstream, mask = _softmax_inputs()
    keras_softmax = keras.layers.Softmax(axis=-1)

    def lean(x):
        return ops.sum(masked_softmax(x, mask) * upstream)

    def reference(x):
        return ops.sum(keras_softmax(x, mask=mask) * upstream)

    probs = ops.convert_to_numpy(masked_softmax(scores, mask))
    np.testing.assert_array_equal(
        probs, ops.convert_to_numpy(keras_softmax(scores, mask=mask))
    )
    # Rows sum to 1, masked positions are 0, the fully masked row is all 0.
    np.testing.assert_allclose(probs[1].sum(-1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(probs[~np.broadcast_to(mask, probs.shape)], 0.0)
    np.testing.assert_array_equal(probs[0, :, 1], 0.0)
    value, (gradient,) = value_and_gradients(lean, (scores,), mode)
    want_value, (want_gradient,) = value_and_gradients(reference, (scores,), "eager")
    np.testing.assert_allclose(value, want_value, rtol=1e-5)
    np.testing.assert_allclose(gradient, want_gradient, rtol=1e-5, atol=1e-6)
    # By hand: p * (g - sum(g * p)) on each row; 0 in the fully masked row.
    by_hand = probs * (upstream - (upstream * probs).sum(-1, keepdims=True))
    np.testing.assert_allclose(gradient, by_hand, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(gradient[0, :, 1], 0.0)


def test_masked_softmax_under_half_precision_matches_keras():
    scores, _, mask = _softmax_inputs()
    for dtype in ("float16", "bfloat16"):
        half = ops.cast(scores, dtype)
        got = masked_softmax(half, mask)
        assert keras.backend.standardize_dtype(got.dtype) == dtype
        want = keras.layers.Softmax(axis=-1, dtype=dtype)(half, mask=mask)
        np.testing.assert_array_equal(
            ops.convert_to_numpy(ops.cast(got, "float32")),
            ops.convert_to_numpy(ops.cast(want, "float32")),
        )


def test_self_attention_cache_reproduces_full_causal_attention():
    query, _ = _inputs(target=6)
    layer = CachedMultiHeadAttention(num_heads=2, key_dim=3, value_dim=5)
    full = np.array(
        layer(query, query, attention_mask=causal_attention_mask(6, 6)[None])
    )
    cache = (np.zeros((2, 2, 6, 3), "float32"), np.zeros((2, 2, 6, 5), "float32"))
    steps = []
    # One step, then a chunk of two, then three single steps.
    for start, stop in [(0, 1), (1, 3), (3, 4), (4, 5), (5, 6)]:
        mask = causal_attention_mask(stop - start, 6, query_offset=start)[None]
        output, cache = layer(
            query[:, start:stop],
            query[:, start:stop],
            attention_mask=mask,
            cache=cache,
            cache_update_index=start,
        )
        steps.append(np.array(output))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, atol=1e-5)
    # The cache holds the projected keys of every position, heads first.
    np.testing.assert_allclose(
        np.array(cache[0]),
        np.array(layer.key_dense(query)).transpose(0, 2, 1, 3),
        atol=1e-6,
    )


def test_read_only_cache_equals_recomputed_keys_and_values():
    query, value = _inputs()
    layer = CachedMultiHeadAttention(num_heads=2, key_dim=4)
    expected = np.array(layer(query, value))
    cache = layer.compute_cache(value)
    output, returned_cache = layer(query, query, cache=cache)
    np.testing.assert_allclose(np.array(output), expected, atol=1e-6)
    assert returned_cache[0] is cache[0]


@pytest.mark.parametrize("beams", [1, 3])
def test_beam_rows_over_one_cache_row_per_sentence_equal_a_tiled_cache(beams):
    rng = np.random.default_rng(3)
    query = rng.normal(size=(2 * beams, 2, 8)).astype("float32")
    value = rng.normal(size=(2, 5, 8)).astype("float32")
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)[:, None]  # [B, 1, S]
    layer = CachedMultiHeadAttention(num_heads=2, key_dim=4, value_dim=3)
    layer(query[:2], value)  # builds the weights
    cache = layer.compute_cache(value)
    tiled = tuple(np.repeat(np.array(c), beams, axis=0) for c in cache)
    # A bias per beam row [B*K, H, T, S], and folded: [B, H, K*T, S]
    bias = rng.normal(size=(2 * beams, 2, 2, 5)).astype("float32")
    folded = bias.reshape(2, beams, 2, 2, 5).transpose(0, 2, 1, 3, 4)
    output, weights, _ = layer(
        query,
        query,
        attention_mask=np.repeat(mask, 2, axis=1),
        cache=cache,
        num_beams=beams,
        return_attention_scores=True,
        attention_bias=folded.reshape(2, 2, beams * 2, 5),
    )
    expected, expected_weights, _ = layer(
        query,
        query,
        attention_mask=np.repeat(np.repeat(mask, 2, axis=1), beams, axis=0),
        cache=tiled,
        return_attention_scores=True,
        attention_bias=bias,
    )
    np.testing.assert_allclose(np.array(output), np.array(expected), atol=1e-6)
    np.testing.assert_allclose(np.array(weights), np.array(expected_weights), atol=1e-6)
    assert tuple(weights.shape) == (2 * beams, 2, 2, 5)


@pytest.mark.parametrize("query_rows,num_beams", [(3, 2), (6, None), (2, 3)])
def test_query_rows_other_than_num_beams_per_cache_row_are_an_error(
    query_rows, num_beams
):
    # The beam count is never inferred from the batch sizes.
    layer = CachedMultiHeadAttention(num_heads=2, key_dim=4)
    layer(np.ones((2, 1, 8), "float32"), np.ones((2, 5, 8), "float32"))
    cache = layer.compute_cache(np.ones((2, 5, 8), "float32"))
    query = np.ones((query_rows, 1, 8), "float32")
    with pytest.raises(ValueError, match=f"query rows={query_rows}, cache rows=2"):
        layer(query, None, cache=cache, num_beams=num_beams)


def test_num_beams_needs_a_cache_and_a_positive_count():
    query, value = _inputs()
    layer = CachedMultiHeadAttention(num_heads=2, key_dim=4)
    with pytest.raises(ValueError, match="num_beams=2"):
        layer(query, value, num_beams=2)
    cache = layer.compute_cache(value)
    with pytest.raises(ValueError, match="num_beams=0"):
        layer(query, query, cache=cache, num_beams=0)


def test_update_index_without_cache_is_an_error():
    query, value = _inputs()
    layer = CachedMultiHeadAttention(num_heads=2, key_dim=4)
    with pytest.raises(ValueError, match="cache_update_index=2"):
        layer(query, value, cache_update_index=2)


def test_beam_shared_self_attention_cache_equals_one_cache_row_per_beam():
    """K beams over one cache row per sentence (slot p * K + j holds position
    p of beam row j) with a history mask == one reordered row per beam."""
    batch, beams, length, index, heads, key_dim = 2, 3, 4, 2, 2, 4
    rng = np.random.default_rng(5)
    layer = CachedMultiHeadAttention(num_heads=heads, key_dim=key_dim, value_dim=3)
    x = rng.normal(size=(batch * beams, 1, 8)).astype("float32")
    layer(x, x)  # builds the weights
    # Shared slots [B, H, L, K, d] with positions 0 .. index - 1 filled.
    slots = [
        rng.normal(size=(batch, heads, length, beams, d)).astype("float32")
        for d in (key_dim, 3)
    ]
    for s in slots:
        s[:, :, index:] = 0.0
    # history[b, k, p]: the slot j holding position p of beam k's hypothesis.
    history = rng.integers(0, beams, (batch, beams, length))
    history[:, :, index] = np.arange(beams)  # the new position: its own slot
    history[:, :, index + 1 :] = -1
    shared_mask = history[..., None] == np.arange(beams)  # [B, K, L, K]
    output, (keys, values) = layer(
        x,
        x,
        attention_mask=shared_mask.reshape(batch, beams, length * beams),
        cache=tuple(s.reshape(batch, heads, length * beams, -1) for s in slots),
        cache_update_index=index,
        num_beams=beams,
    )
    # One row per beam: row b*K + k holds slot history[b, k, p] at position p.
    rows = [
        np.stack(
            [
                np.stack(
                    [s[b, :, p, max(history[b, k, p], 0)] for p in range(length)], 1
                )
                for b in range(batch)
                for k in range(beams)
            ]
        )
        for s in slots
    ]
    causal = np.broadcast_to(np.arange(length) <= index, (batch * beams, 1, length))
    expected, (row_keys, _) = layer(
        x, x, attention_mask=causal, cache=tuple(rows), cache_update_index=index
    )
    np.testing.assert_allclose(np.array(output), np.array(expected), atol=1e-5)
    # The new keys went to slots index * K + k, the per-beam rows' position index.
    new_keys = np.array(keys).reshape(batch, heads, length, beams, key_dim)[:, :, index]
    np.testing.assert_allclose(
        new_keys.transpose(0, 2, 1, 3).reshape(batch * beams, heads, key_dim),
        np.array(row_keys)[:, :, index],
        atol=1e-6,
    )
    assert np.array(values).shape == (batch, heads, length * beams, 3)


def test_every_projection_is_tracked_after_the_dropout_swap():
    # The replaced keras Dropout must leave no id behind in the tracker: a
    # stale id made Keras skip the next layer Python placed at that address
    # (the output projection), whose weights then vanished from `weights`.
    layers = []
    for _ in range(20):
        layer = CachedMultiHeadAttention(num_heads=2, key_dim=3)
        layer.build((2, 4, 8), (2, 5, 8))
        layers.append(layer)
        tracked = {id(sublayer) for sublayer in layer._layers}
        assert layer._tracker.stored_ids["layers"] == tracked
        assert len(layer.weights) == 8  # q, k, v, output: kernel and bias
