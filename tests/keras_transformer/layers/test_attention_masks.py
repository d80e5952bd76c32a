import numpy as np

from keras_transformer.layers.attention_masks import (
    causal_attention_mask,
    key_padding_attention_mask,
    merge_attention_masks,
    padding_mask,
)


def test_padding_mask_marks_real_tokens():
    ids = np.array([[5, 3, 0, 0], [7, 0, 0, 0]])
    expected = [[True, True, False, False], [True, False, False, False]]
    np.testing.assert_array_equal(np.array(padding_mask(ids)), expected)


def test_key_padding_mask_broadcasts_over_queries():
    mask = np.array(key_padding_attention_mask(np.array([[1, 1, 0]], bool), 2))
    np.testing.assert_array_equal(mask, [[[True, True, False], [True, True, False]]])


def test_causal_mask_is_lower_triangular():
    np.testing.assert_array_equal(
        np.array(causal_attention_mask(3, 3)),
        [[True, False, False], [True, True, False], [True, True, True]],
    )


def test_causal_mask_with_offset_hides_unwritten_cache_slots():
    # Queries at positions 2 and 3 of a 5-slot cache.
    np.testing.assert_array_equal(
        np.array(causal_attention_mask(2, 5, query_offset=2)),
        [[True, True, True, False, False], [True, True, True, True, False]],
    )


def test_merge_combines_padding_and_attention_masks():
    causal = np.array(causal_attention_mask(2, 2))[None]
    merged = np.array(merge_attention_masks(2, np.array([[1, 0]], bool), causal))
    np.testing.assert_array_equal(merged, [[[True, False], [True, False]]])
    assert merge_attention_masks(2) is None
