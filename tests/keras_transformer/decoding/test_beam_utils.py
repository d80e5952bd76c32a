import numpy as np

from keras_transformer.decoding import gather_beams, tile_beams
from keras_transformer.decoding.beam_utils import flat_beam_indices


def test_tile_then_gather_reorders_every_leaf():
    nest = {"a": np.array([[1, 1], [2, 2]]), "b": [np.array([10, 20])]}
    tiled = tile_beams(nest, 3)  # [B, ...] -> [B*K, ...]
    np.testing.assert_array_equal(np.array(tiled["b"][0]), [10, 10, 10, 20, 20, 20])
    # Sentence 0 keeps beams (2, 0, 0), sentence 1 keeps (1, 1, 2).
    rows = flat_beam_indices(np.array([[2, 0, 0], [1, 1, 2]]))
    np.testing.assert_array_equal(np.array(rows), [2, 0, 0, 4, 4, 5])
    gathered = gather_beams(tiled, rows)
    np.testing.assert_array_equal(np.array(gathered["a"])[:, 0], [1, 1, 1, 2, 2, 2])
