import numpy as np
import pytest

from keras_transformer.layers import LearnedPositionEmbedding
from tests.layer_check import run_layer_check


def test_layer_check(tmp_path):
    run_layer_check(
        LearnedPositionEmbedding,
        {"sequence_length": 6},
        {"inputs": np.zeros((2, 4, 8), "float32")},
        expected_output_shape=(2, 4, 8),
        tmp_path=tmp_path,
    )


def test_returns_table_rows_from_start_index():
    layer = LearnedPositionEmbedding(sequence_length=10)
    layer.build((None, None, 4))
    table = np.array(layer.position_embeddings)
    output = np.array(layer(np.zeros((2, 3, 4), "float32"), start_index=5))
    np.testing.assert_array_equal(output[0], table[5:8])
    np.testing.assert_array_equal(output[1], table[5:8])


def test_bad_sequence_length():
    with pytest.raises(ValueError, match="sequence_length=-1"):
        LearnedPositionEmbedding(sequence_length=-1)
