import numpy as np
import pytest

from keras_transformer.layers import CachedMultiHeadAttention
from keras_transformer.layers.attention_masks import causal_attention_mask
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


def _reference_attention(layer, query, value, mask=None):
    """Eq. (1) and §3.2.2 in numpy, from the layer's own weights."""
    wq, bq = (np.array(w) for w in layer.query_dense.weights)
    wk, bk = (np.array(w) for w in layer.key_dense.weights)
    wv, bv = (np.array(w) for w in layer.value_dense.weights)
    wo, bo = (np.array(w) for w in layer.output_dense.weights)
    q = np.einsum("btd,dhk->bthk", query, wq) + bq
    k = np.einsum("bsd,dhk->bshk", value, wk) + bk
    v = np.einsum("bsd,dhk->bshk", value, wv) + bv
    scores = np.einsum("bthk,bshk->bhts", q, k) / np.sqrt(q.shape[-1])
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


def test_self_attention_cache_reproduces_full_causal_attention():
    query, _ = _inputs(target=6)
    layer = CachedMultiHeadAttention(num_heads=2, key_dim=3, value_dim=5)
    full = np.array(
        layer(query, query, attention_mask=causal_attention_mask(6, 6)[None])
    )
    cache = (np.zeros((2, 6, 2, 3), "float32"), np.zeros((2, 6, 2, 5), "float32"))
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
    # The cache holds the projected keys of every position.
    np.testing.assert_allclose(
        np.array(cache[0]), np.array(layer.key_dense(query)), atol=1e-6
    )


def test_read_only_cache_equals_recomputed_keys_and_values():
    query, value = _inputs()
    layer = CachedMultiHeadAttention(num_heads=2, key_dim=4)
    expected = np.array(layer(query, value))
    cache = layer.compute_cache(value)
    output, returned_cache = layer(query, query, cache=cache)
    np.testing.assert_allclose(np.array(output), expected, atol=1e-6)
    assert returned_cache[0] is cache[0]


def test_update_index_without_cache_is_an_error():
    query, value = _inputs()
    layer = CachedMultiHeadAttention(num_heads=2, key_dim=4)
    with pytest.raises(ValueError, match="cache_update_index=2"):
        layer(query, value, cache_update_index=2)
