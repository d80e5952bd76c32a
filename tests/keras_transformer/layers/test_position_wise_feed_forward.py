import keras
import numpy as np
import pytest
from keras import ops

from keras_transformer.layers import PositionWiseFeedForward
from keras_transformer.layers.position_wise_feed_forward import (
    rematerialized_feed_forward,
)
from tests.gradients import value_and_gradients
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


@pytest.mark.parametrize("mode", ["eager", "graph", "xla"])
def test_rematerialized_feed_forward_gradients_equal_autodiff(mode):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 4)).astype("float32")
    kernel_1 = rng.normal(size=(4, 5)).astype("float32")
    bias_1 = rng.normal(size=(5,)).astype("float32")
    # A pre-activation of exactly 0: ReLU's gradient there is 0 in both.
    bias_1[0] = -float(x[0] @ kernel_1[:, 0])
    kernel_2 = rng.normal(size=(5, 3)).astype("float32")
    # A non-unit upstream gradient.
    upstream = rng.normal(size=(6, 3)).astype("float32")
    arguments = (x, kernel_1, bias_1, kernel_2)

    def fused(x, w1, b1, w2):
        return ops.sum(rematerialized_feed_forward(x, w1, b1, w2) * upstream)

    def reference(x, w1, b1, w2):
        return ops.sum(ops.matmul(ops.relu(ops.matmul(x, w1) + b1), w2) * upstream)

    value, gradients = value_and_gradients(fused, arguments, mode)
    want_value, want_gradients = value_and_gradients(reference, arguments, "eager")
    np.testing.assert_allclose(value, want_value, rtol=1e-5)
    # d/d b_1 by hand: the upstream gradient through W_2, where ReLU is active.
    pre_activation = x @ kernel_1 + bias_1
    by_hand = ((upstream @ kernel_2.T) * (pre_activation > 0)).sum(0)
    np.testing.assert_allclose(gradients[2], by_hand, rtol=1e-5, atol=1e-5)
    for got, want in zip(gradients, want_gradients, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _layer_output_and_gradients(layer, x, upstream, training):
    def loss(values):
        outputs, _ = layer.stateless_call(
            values, layer.non_trainable_variables, x, training=training
        )
        return ops.sum(outputs * upstream)

    if keras.backend.backend() == "jax":
        import jax  # noqa: PLC0415

        values = [v.value for v in layer.trainable_variables]
        value, gradients = jax.value_and_grad(loss)(values)
    else:
        import tensorflow as tf  # noqa: PLC0415

        with tf.GradientTape() as tape:
            value = ops.sum(layer(x, training=training) * upstream)
        gradients = tape.gradient(value, layer.trainable_variables)
    return np.array(value), [np.array(g) for g in gradients]


def test_training_uses_the_rematerialized_op_with_the_same_outputs_and_gradients():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 3, 8)).astype("float32")
    upstream = rng.normal(size=(2, 3, 8)).astype("float32")
    layer = PositionWiseFeedForward(intermediate_dim=16)
    layer.build(x.shape)
    assert layer._rematerializes_in_training()
    # training=False takes the plain path: ReLU, dropout, Dense.
    trained = _layer_output_and_gradients(layer, x, upstream, training=True)
    plain = _layer_output_and_gradients(layer, x, upstream, training=False)
    np.testing.assert_allclose(trained[0], plain[0], rtol=1e-5)
    assert len(trained[1]) == 4
    for got, want in zip(trained[1], plain[1], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "kwargs",
    [{"activation": "gelu"}, {"activation_dropout": 0.1}],
)
def test_other_activations_and_activation_dropout_take_the_plain_path(kwargs):
    layer = PositionWiseFeedForward(intermediate_dim=16, **kwargs)
    layer.build((2, 3, 8))
    assert not layer._rematerializes_in_training()
