import math

import numpy as np
import pytest

from keras_transformer.layers import SinusoidalPositionEncoding
from tests.layer_check import run_layer_check


def test_layer_check(tmp_path):
    run_layer_check(
        SinusoidalPositionEncoding,
        {},
        {"inputs": np.zeros((2, 4, 8), "float32")},
        expected_output_shape=(2, 4, 8),
        tmp_path=tmp_path,
        expect_trainable_weights=False,
    )


def test_hand_computed_values():
    # d_model = 4: PE(pos, 0) = sin(pos), PE(pos, 1) = cos(pos),
    # PE(pos, 2) = sin(pos / 10000^(2/4)) = sin(pos / 100), PE(pos, 3) = cos(...)
    encoding = np.array(SinusoidalPositionEncoding()(np.zeros((1, 3, 4), "float32")))
    expected = [
        [math.sin(p), math.cos(p), math.sin(p / 100), math.cos(p / 100)]
        for p in range(3)
    ]
    np.testing.assert_allclose(encoding[0], expected, atol=1e-6)


def test_start_index_continues_the_sequence():
    layer = SinusoidalPositionEncoding()
    full = np.array(layer(np.zeros((1, 10, 6), "float32")))
    tail = np.array(layer(np.zeros((1, 3, 6), "float32"), start_index=7))
    np.testing.assert_allclose(tail, full[:, 7:], atol=1e-5)


def test_odd_feature_size_is_an_error():
    with pytest.raises(ValueError, match="even feature size"):
        SinusoidalPositionEncoding()(np.zeros((1, 3, 5), "float32"))


def test_bad_wavelength():
    with pytest.raises(ValueError, match="max_wavelength=0"):
        SinusoidalPositionEncoding(max_wavelength=0)
