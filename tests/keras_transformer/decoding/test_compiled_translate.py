import numpy as np
import pytest

from keras_transformer.decoding import DecodingConfig, compiled_translate, translate


@pytest.mark.parametrize(
    "method, share_beam_cache", [("beam", True), ("beam", False), ("greedy", True)]
)
def test_compiled_translate_equals_plain(tiny_model, method, share_beam_cache):
    # XLA (tf.function(jit_compile=True)) on TensorFlow, jax.jit on JAX.
    rng = np.random.default_rng(11)
    source = rng.integers(4, 10, (4, 5)).astype("int32")
    source[1, 2:] = 0
    config = DecodingConfig(
        method=method,
        beam_size=3,
        alpha=0.6,
        max_extra_length=4,
        share_beam_cache=share_beam_cache,
    )
    plain_ids, plain_scores = translate(tiny_model, source, config)
    fn = compiled_translate(tiny_model, config, jit_compile=True)
    compiled_ids, compiled_scores = fn(source)
    np.testing.assert_array_equal(np.array(compiled_ids), np.array(plain_ids))
    np.testing.assert_allclose(
        np.array(compiled_scores), np.array(plain_scores), rtol=1e-4, atol=1e-5
    )


def test_fixed_arguments_reach_translate(tiny_model):
    source = np.array([[4, 5, 6, 0]], "int32")
    config = DecodingConfig(method="greedy")
    fn = compiled_translate(tiny_model, config, jit_compile=False, max_length=3)
    ids, scores = fn(source)
    expected_ids, expected_scores = translate(tiny_model, source, config, max_length=3)
    assert np.array(ids).shape == (1, 1, 3)
    np.testing.assert_array_equal(np.array(ids), np.array(expected_ids))
    np.testing.assert_allclose(np.array(scores), np.array(expected_scores), rtol=1e-5)
