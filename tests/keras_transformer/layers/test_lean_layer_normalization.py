import keras
import numpy as np
import pytest
from keras import ops

from keras_transformer.layers import LeanLayerNormalization
from keras_transformer.layers.lean_layer_normalization import normalize_last_axis
from tests.gradients import value_and_gradients
from tests.layer_check import run_layer_check

EPSILON = 1e-6


def test_layer_check(tmp_path):
    run_layer_check(
        LeanLayerNormalization,
        {"epsilon": EPSILON},
        {"inputs": np.random.rand(2, 3, 8).astype("float32")},
        expected_output_shape=(2, 3, 8),
        tmp_path=tmp_path,
    )


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(3.0, 2.0, size=(2, 3, 8)).astype("float32")
    gamma = rng.normal(1.0, 0.5, size=(8,)).astype("float32")
    beta = rng.normal(0.0, 0.5, size=(8,)).astype("float32")
    upstream = rng.normal(size=(2, 3, 8)).astype("float32")
    return x, gamma, beta, upstream


def test_matches_the_formula_and_keras():
    x, gamma, beta, _ = _inputs()
    layer = LeanLayerNormalization(epsilon=EPSILON)
    layer.build(x.shape)
    layer.set_weights([gamma, beta])
    reference = keras.layers.LayerNormalization(epsilon=EPSILON)
    reference.build(x.shape)
    reference.set_weights([gamma, beta])
    mean = x.mean(-1, keepdims=True)
    by_hand = (x - mean) / np.sqrt(x.var(-1, keepdims=True) + EPSILON) * gamma + beta
    output = ops.convert_to_numpy(layer(x))
    np.testing.assert_allclose(output, by_hand, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(output, ops.convert_to_numpy(reference(x)), atol=1e-5)


@pytest.mark.parametrize("mode", ["eager", "graph", "xla"])
def test_gradients_equal_autodiff_of_keras_layer_normalization(mode):
    x, gamma, beta, upstream = _inputs(1)

    def lean(x, gamma, beta):
        return ops.sum(normalize_last_axis(x, gamma, beta, EPSILON) * upstream)

    def reference(x, gamma, beta):
        outputs = ops.layer_normalization(x, gamma, beta, epsilon=EPSILON)
        return ops.sum(outputs * upstream)

    value, gradients = value_and_gradients(lean, (x, gamma, beta), mode)
    want_value, want_gradients = value_and_gradients(
        reference, (x, gamma, beta), "eager"
    )
    np.testing.assert_allclose(value, want_value, rtol=1e-5)
    assert [g.shape for g in gradients] == [(2, 3, 8), (8,), (8,)]
    # d/d beta of sum(y * u) is the sum of u over the rows, by hand.
    np.testing.assert_allclose(gradients[2], upstream.sum((0, 1)), rtol=1e-5)
    for got, want in zip(gradients, want_gradients, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.filterwarnings("ignore:You passed `rms_scaling=True`")
@pytest.mark.parametrize(
    "kwargs",
    [{"axis": [1, 2]}, {"rms_scaling": True}, {"center": False}, {"scale": False}],
)
def test_other_settings_run_keras_own_computation(kwargs):
    x, _, _, _ = _inputs(2)
    layer = LeanLayerNormalization(epsilon=EPSILON, **kwargs)
    reference = keras.layers.LayerNormalization(epsilon=EPSILON, **kwargs)
    layer.build(x.shape)
    reference.build(x.shape)
    assert not layer._normalizes_last_axis(len(x.shape))
    np.testing.assert_allclose(
        ops.convert_to_numpy(layer(x)), ops.convert_to_numpy(reference(x)), atol=1e-6
    )


def test_half_precision_policy_computes_in_float32():
    x, gamma, beta, _ = _inputs(3)
    layer = LeanLayerNormalization(epsilon=EPSILON, dtype="mixed_bfloat16")
    layer.build(x.shape)
    layer.set_weights([gamma, beta])
    output = layer(ops.cast(x, "bfloat16"))
    assert keras.backend.standardize_dtype(output.dtype) == "bfloat16"
    full = LeanLayerNormalization(epsilon=EPSILON)
    full.build(x.shape)
    full.set_weights([gamma, beta])
    # bfloat16 inputs and output (8 bits of mantissa), float32 inside.
    np.testing.assert_allclose(
        ops.convert_to_numpy(ops.cast(output, "float32")),
        ops.convert_to_numpy(full(x)),
        atol=0.1,
    )
