import numpy as np
import pytest

from keras_transformer.layers import PositionWiseFeedForward
from tests.layer_check import run_layer_check


def test_layer_check(tmp_path):
    run_layer_check(
        PositionWiseFeedForward,
        {"intermediate_dim": 16, "activation_dropout": 0.1},
        {"inputs": np.random.rand(2, 3, 8).astype("float32")},
        expected_output_shape=(2, 3, 8),
        tmp_path=tmp_path,
    )


def test_matches_equation_2():
    x = np.random.default_rng(0).normal(size=(2, 3, 8)).astype("float32")
    layer = PositionWiseFeedForward(intermediate_dim=16)
    output = np.array(layer(x))
    w1, b1 = (np.array(w) for w in layer.intermediate_dense.weights)
    w2, b2 = (np.array(w) for w in layer.output_dense.weights)
    expected = np.maximum(0.0, x @ w1 + b1) @ w2 + b2  # FFN(x), Eq. (2)
    np.testing.assert_allclose(output, expected, atol=1e-5)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"intermediate_dim": 0}, "intermediate_dim=0"),
        (
            {"intermediate_dim": 8, "activation_dropout": -0.1},
            "activation_dropout=-0.1",
        ),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PositionWiseFeedForward(**kwargs)
