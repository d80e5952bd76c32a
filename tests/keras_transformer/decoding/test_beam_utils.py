import numpy as np
import pytest
from keras import ops

from keras_transformer.decoding import gather_beams, tile_beams
from keras_transformer.decoding.beam_utils import flat_beam_indices, top_k_by_blocks


def test_tile_then_gather_reorders_every_leaf():
    nest = {"a": np.array([[1, 1], [2, 2]]), "b": [np.array([10, 20])]}
    tiled = tile_beams(nest, 3)  # [B, ...] -> [B*K, ...]
    np.testing.assert_array_equal(np.array(tiled["b"][0]), [10, 10, 10, 20, 20, 20])
    # Sentence 0 keeps beams (2, 0, 0), sentence 1 keeps (1, 1, 2).
    rows = flat_beam_indices(np.array([[2, 0, 0], [1, 1, 2]]))
    np.testing.assert_array_equal(np.array(rows), [2, 0, 0, 4, 4, 5])
    gathered = gather_beams(tiled, rows)
    np.testing.assert_array_equal(np.array(gathered["a"])[:, 0], [1, 1, 1, 2, 2, 2])


@pytest.mark.parametrize(
    "shape,k,block_size",
    [
        ((3, 4, 8000), 8, 16),  # the small config's beam step
        ((5, 1000), 3, 7),  # padded last block
        ((2, 37000), 8, 16),  # base's vocabulary, padded
        ((4, 20), 8, 16),  # short rows: plain top-k
    ],
)
def test_top_k_by_blocks_equals_top_k_ties_included(shape, k, block_size):
    rng = np.random.default_rng(0)
    # Few distinct values: many ties, which must resolve lowest index first.
    x = rng.integers(0, 40, shape).astype("float32")
    values, indices = top_k_by_blocks(ops.convert_to_tensor(x), k, block_size)
    expected_values, expected_indices = ops.top_k(ops.convert_to_tensor(x), k)
    np.testing.assert_array_equal(ops.convert_to_numpy(values), expected_values)
    np.testing.assert_array_equal(ops.convert_to_numpy(indices), expected_indices)
    assert ops.convert_to_numpy(indices).dtype == np.int32
