import keras
import numpy as np
import pytest
from keras import ops

from keras_transformer.decoding import gather_beams, tile_beams
from keras_transformer.decoding.beam_utils import (
    flat_beam_indices,
    take_per_row,
    top_k_by_blocks,
)


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


@pytest.mark.parametrize("trailing", [(), (5,), (2, 3)])
def test_take_per_row_equals_take_along_axis(trailing):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 4, *trailing)).astype("float32")
    # Repeats and any order, as beam reordering asks: [B, M] with M != N.
    indices = np.array([[3, 3, 0, 1, 2, 0], [0, 1, 2, 3, 2, 1], [1, 1, 1, 1, 1, 1]])
    taken = ops.convert_to_numpy(take_per_row(x, indices))
    expected = np.take_along_axis(
        x, indices.reshape(indices.shape + (1,) * len(trailing)), axis=1
    )
    assert taken.shape == (3, 6, *trailing)
    np.testing.assert_array_equal(taken, expected)


def test_take_per_row_with_run_time_sizes():
    # A batch, a row length and a trailing size known only at run time
    # (translate's batches and buffers in TensorFlow graph mode).
    tf = pytest.importorskip("tensorflow")
    if keras.backend.backend() != "tensorflow":
        pytest.skip("run-time sizes are TensorFlow graph mode's")
    x = np.arange(2 * 5 * 3, dtype="int32").reshape(2, 5, 3)
    indices = np.array([[4, 0], [2, 2]], dtype="int32")
    spec = tf.TensorSpec([None, None, None], "int32")
    taken = tf.function(
        take_per_row, input_signature=[spec, tf.TensorSpec([None, None], "int32")]
    )
    np.testing.assert_array_equal(
        taken(x, indices).numpy(), np.take_along_axis(x, indices[..., None], axis=1)
    )
