import math

import numpy as np
import pytest

from keras_transformer.layers import ScaledReversibleEmbedding
from tests.layer_check import run_layer_check


def test_layer_check(tmp_path):
    run_layer_check(
        ScaledReversibleEmbedding,
        {"input_dim": 10, "output_dim": 4},
        {"inputs": np.random.randint(0, 10, (2, 3)).astype("int32")},
        expected_output_shape=(2, 3, 4),
        tmp_path=tmp_path,
    )


def test_lookup_is_scaled_by_sqrt_d_model_and_reverse_is_not():
    layer = ScaledReversibleEmbedding(input_dim=7, output_dim=16)
    ids = np.array([[1, 6, 0]])
    vectors = np.array(layer(ids))
    table = np.array(layer.embeddings)
    np.testing.assert_allclose(vectors[0], table[[1, 6, 0]] * math.sqrt(16), atol=1e-6)
    hidden = np.random.default_rng(0).normal(size=(1, 2, 16)).astype("float32")
    logits = np.array(layer(hidden, reverse=True))
    np.testing.assert_allclose(logits, hidden @ table.T, atol=1e-5)


def test_default_initializer_gives_unit_variance_after_scaling():
    layer = ScaledReversibleEmbedding(input_dim=2000, output_dim=64)
    vectors = np.array(layer(np.arange(2000)[None]))
    assert abs(vectors.std() - 1.0) < 0.05


def test_untied_reverse_projection_has_its_own_weights():
    layer = ScaledReversibleEmbedding(input_dim=7, output_dim=4, tie_weights=False)
    layer.build()
    assert len(layer.trainable_weights) == 2


@pytest.mark.parametrize("tie_weights", [True, False])
def test_output_kernel_is_the_reverse_call_in_the_embedding_layout(tie_weights):
    layer = ScaledReversibleEmbedding(
        input_dim=7, output_dim=4, tie_weights=tie_weights
    )
    layer.build()
    kernel = np.array(layer.output_kernel())
    assert kernel.shape == (7, 4)  # [V, D]
    hidden = np.random.default_rng(0).normal(size=(2, 3, 4)).astype("float32")
    logits = np.array(layer(hidden, reverse=True))
    np.testing.assert_allclose(hidden @ kernel.T, logits, rtol=1e-5, atol=1e-6)
