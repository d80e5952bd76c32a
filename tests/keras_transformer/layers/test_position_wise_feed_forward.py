import keras
import numpy as np
import pytest
from keras import ops

from keras_transformer.layers import PositionWiseFeedForward
from keras_transformer.layers.position_wise_feed_forward import relu_then_project
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


def _value_and_gradients(function, arguments, mode):
    """`function(*arguments)` (a scalar) and its gradients, on this backend."""
    if keras.backend.backend() == "jax":
        import jax  # noqa: PLC0415 (the backend under test)

        run = jax.value_and_grad(function, argnums=tuple(range(len(arguments))))
        if mode != "eager":
            run = jax.jit(run)
        value, gradients = run(*arguments)
    else:
        import tensorflow as tf  # noqa: PLC0415

        def run(*tensors):
            with tf.GradientTape() as tape:
                tape.watch(tensors)
                value = function(*tensors)
            return value, tape.gradient(value, tensors)

        if mode != "eager":
            run = tf.function(run, jit_compile=mode == "xla")
        value, gradients = run(*(tf.constant(a) for a in arguments))
    return np.array(value), [np.array(g) for g in gradients]


@pytest.mark.parametrize("mode", ["eager", "graph", "xla"])
def test_relu_then_project_gradients_equal_autodiff(mode):
    rng = np.random.default_rng(0)
    pre_activation = rng.normal(size=(6, 5)).astype("float32")
    pre_activation[0, :2] = 0.0  # ReLU's gradient at 0 is 0 in both
    kernel = rng.normal(size=(5, 3)).astype("float32")
    # A non-unit upstream gradient.
    upstream = rng.normal(size=(6, 3)).astype("float32")

    def fused(x, w):
        return ops.sum(relu_then_project(x, w) * upstream)

    def reference(x, w):
        return ops.sum(ops.matmul(ops.relu(x), w) * upstream)

    value, gradients = _value_and_gradients(fused, (pre_activation, kernel), mode)
    want_value, want_gradients = _value_and_gradients(
        reference, (pre_activation, kernel), "eager"
    )
    np.testing.assert_allclose(value, want_value, rtol=1e-5)
    by_hand = (upstream @ kernel.T) * (pre_activation > 0)
    np.testing.assert_allclose(gradients[0], by_hand, rtol=1e-5, atol=1e-6)
    for got, want in zip(gradients, want_gradients, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


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


def test_training_uses_the_fused_op_with_the_same_outputs_and_gradients():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 3, 8)).astype("float32")
    upstream = rng.normal(size=(2, 3, 8)).astype("float32")
    layer = PositionWiseFeedForward(intermediate_dim=16)
    layer.build(x.shape)
    assert layer._fuses_relu_and_projection()
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
    assert not layer._fuses_relu_and_projection()
