import numpy as np

from keras_transformer.layers.transformer_block_base import TransformerBlockBase


def _layer_norm(x, epsilon=1e-6):
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(-1, keepdims=True) + epsilon)


def _residual(normalize_first, x, fn):
    block = TransformerBlockBase(num_heads=1, intermediate_dim=4, dropout=0.5)
    block.normalize_first = normalize_first
    block._build_norm_and_dropout("sublayer", x.shape)
    output, extras = block._residual(
        "sublayer", x, lambda y: (fn(y), "extras"), training=False
    )
    assert extras == "extras"
    return np.array(output)


def test_post_norm_is_layer_norm_of_x_plus_sublayer():
    x = np.random.default_rng(0).normal(size=(2, 3, 8)).astype("float32")
    output = _residual(False, x, lambda y: 2.0 * y + 1.0)
    # LayerNorm(x + Sublayer(x)), §3.1 (gamma = 1, beta = 0 at initialisation)
    np.testing.assert_allclose(output, _layer_norm(x + 2.0 * x + 1.0), atol=1e-5)


def test_pre_norm_is_x_plus_sublayer_of_layer_norm():
    x = np.random.default_rng(0).normal(size=(2, 3, 8)).astype("float32")
    output = _residual(True, x, lambda y: 2.0 * y + 1.0)
    np.testing.assert_allclose(output, x + 2.0 * _layer_norm(x) + 1.0, atol=1e-5)


def test_residual_dropout_is_active_in_training_only():
    x = np.ones((1, 64, 8), "float32")
    block = TransformerBlockBase(num_heads=1, intermediate_dim=4, dropout=0.5)
    block.normalize_first = True
    block._build_norm_and_dropout("sublayer", x.shape)
    ones = lambda y: (np.ones_like(x), None)  # noqa: E731
    inference, _ = block._residual("sublayer", x, ones, training=False)
    training, _ = block._residual("sublayer", x, ones, training=True)
    np.testing.assert_array_equal(np.array(inference), 2.0)
    # Dropped units add 0, kept ones add 1 / (1 - 0.5) = 2.
    assert set(np.unique(np.array(training))) == {1.0, 3.0}
