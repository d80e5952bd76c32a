import numpy as np
import pytest

from keras_transformer.layers import WordDistanceBias
from tests.layer_check import run_layer_check


def test_layer_check(tmp_path):
    words = np.array([[0, 0, 1, 2, -1], [-1, 0, 1, -1, -1]], "int32")
    run_layer_check(
        WordDistanceBias,
        {"window": 2, "num_heads": 3},
        {"query_words": words[:, :4], "key_words": words},
        expected_output_shape=(2, 3, 4, 5),
        tmp_path=tmp_path,
    )


def test_bias_by_hand():
    # Window 1: rows are distances -1, 0, +1 and "no word"; 2 heads.
    layer = WordDistanceBias(window=1, num_heads=2)
    layer.build()
    table = np.array([[1, 10], [2, 20], [3, 30], [4, 40]], "float32")
    layer.table.assign(table)
    # keys: words 0 (2 pieces), 1, 2, no word; queries: words 0, 2, no word
    keys = np.array([[0, 0, 1, 2, -1]], "int32")
    queries = np.array([[0, 2, -1]], "int32")
    bias = np.asarray(layer(queries, keys))
    # distances key - query: [0 0 1 2 -], [-2 -2 -1 0 -], [- - - - -]
    rows = [[1, 1, 2, 2, 3], [0, 0, 0, 1, 3], [3, 3, 3, 3, 3]]
    assert bias.shape == (1, 2, 3, 5)
    np.testing.assert_array_equal(bias[0], table[rows].transpose(2, 0, 1))


def test_starts_at_zero():
    words = np.array([[0, 1, 2]], "int32")
    np.testing.assert_array_equal(
        np.asarray(WordDistanceBias(window=2, num_heads=1)(words, words)), 0.0
    )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"window": 0, "num_heads": 2}, "window=0"),
        ({"window": 2, "num_heads": 0}, "num_heads=0"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        WordDistanceBias(**kwargs)
