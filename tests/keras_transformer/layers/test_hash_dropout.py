import keras
import numpy as np
import pytest
from keras import ops

from keras_transformer.layers import CachedMultiHeadAttention, HashDropout
from keras_transformer.layers.hash_dropout import hash32, hash_bits, scale_kept
from tests.gradients import value_and_gradients
from tests.layer_check import run_layer_check

MASK = 0xFFFFFFFF


def _reference_hash32(x):
    """lowbias32 in numpy, on uint64 to make the 32-bit wrap explicit."""
    x = np.asarray(x, dtype=np.uint64) & MASK
    x ^= x >> 16
    x = (x * 0x7FEB352D) & MASK
    x ^= x >> 15
    x = (x * 0x846CA68B) & MASK
    x ^= x >> 16
    return x


def _reference_bits(shape, seed):
    seed = np.asarray(seed, dtype=np.uint64) & MASK
    key_0 = _reference_hash32(seed[0])
    key_1 = _reference_hash32(((seed[1] ^ 0x9E3779B9) + key_0) & MASK)
    position = np.arange(np.prod(shape), dtype=np.uint64).reshape(shape)
    return _reference_hash32((_reference_hash32(position ^ key_0) + key_1) & MASK)


def _seed(values):
    # The SeedGenerator state's dtype: int64 on TensorFlow, uint32 on JAX.
    dtype = "int64" if keras.backend.backend() == "tensorflow" else "uint32"
    return ops.convert_to_tensor(np.array(values), dtype=dtype)


def test_layer_check(tmp_path):
    run_layer_check(
        HashDropout,
        {"rate": 0.25, "seed": 3},
        {"inputs": np.random.rand(2, 3, 8).astype("float32")},
        expected_output_shape=(2, 3, 8),
        tmp_path=tmp_path,
        expect_trainable_weights=False,
    )


def test_hash32_matches_hand_computed_values():
    # lowbias32(0) = 0 (xor-shift-multiply fixes 0); 1 and 2^32 - 1 by hand
    # in the numpy reference.
    x = np.array([0, 1, 12345, MASK], dtype=np.uint64)
    got = ops.convert_to_numpy(hash32(ops.convert_to_tensor(x, "uint32")))
    np.testing.assert_array_equal(got, _reference_hash32(x))
    assert got[0] == 0 and got[1] != 1


@pytest.mark.parametrize("seed", [(0, 0), (5, 7), (2**31 + 9, 123456)])
def test_hash_bits_match_the_numpy_reference_bit_for_bit(seed):
    got = ops.convert_to_numpy(hash_bits((3, 5, 7), _seed(seed)))
    assert got.dtype == np.uint32
    np.testing.assert_array_equal(got, _reference_bits((3, 5, 7), seed))


def test_drop_fraction_and_scaling():
    rate = 0.1
    layer = HashDropout(rate, seed=11)
    x = np.random.default_rng(0).uniform(1.0, 2.0, (1000, 1000)).astype("float32")
    y = ops.convert_to_numpy(layer(x, training=True))
    kept = y != 0
    # Binomial standard deviation sqrt(0.09 / 1e6) = 3e-4: 7 sigmas.
    assert abs(kept.mean() - (1 - rate)) < 2e-3
    np.testing.assert_allclose(y[kept], x[kept] / (1 - rate), rtol=1e-6)
    # Neighbouring positions drop independently: P(both kept) = (1 - rate)^2.
    both = np.logical_and(kept[:, :-1], kept[:, 1:]).mean()
    assert abs(both - (1 - rate) ** 2) < 3e-3


def test_inactive_outside_training_and_at_rate_zero():
    x = np.random.rand(4, 6).astype("float32")
    np.testing.assert_array_equal(ops.convert_to_numpy(HashDropout(0.5, seed=1)(x)), x)
    np.testing.assert_array_equal(
        ops.convert_to_numpy(HashDropout(0.0)(x, training=True)), x
    )


def test_each_call_draws_a_new_independent_mask_and_seeds_reproduce():
    rate = 0.5
    x = np.ones((400, 500), "float32")
    layer = HashDropout(rate, seed=7)
    first = ops.convert_to_numpy(layer(x, training=True)) != 0
    second = ops.convert_to_numpy(layer(x, training=True)) != 0
    # Independent masks agree with probability rate^2 + (1 - rate)^2 = 0.5.
    assert abs((first == second).mean() - 0.5) < 5e-3
    # A fresh layer with the same seed replays the same sequence of masks.
    again = HashDropout(rate, seed=7)
    np.testing.assert_array_equal(
        ops.convert_to_numpy(again(x, training=True)) != 0, first
    )
    other = ops.convert_to_numpy(HashDropout(rate, seed=8)(x, training=True)) != 0
    assert abs((first == other).mean() - 0.5) < 5e-3


def test_noise_shape_broadcasts_one_mask():
    layer = HashDropout(0.5, noise_shape=(None, 1, 16), seed=2)
    y = ops.convert_to_numpy(layer(np.ones((3, 5, 16), "float32"), training=True))
    # The same mask for every position along axis 1.
    np.testing.assert_array_equal(y, np.broadcast_to(y[:, :1], y.shape))
    assert 0 < (y == 0).mean() < 1


def test_attention_dropout_is_a_hash_dropout_with_one_seed_generator():
    layer = CachedMultiHeadAttention(num_heads=2, key_dim=4, dropout=0.3, seed=5)
    x = np.ones((1, 3, 8), "float32")
    layer(x, x)
    assert isinstance(layer._dropout_layer, HashDropout)
    assert layer._dropout_layer.rate == 0.3
    # The parent's Keras Dropout is gone: one seed-generator state only.
    states = [v for v in layer.non_trainable_variables if "seed" in v.path]
    assert len(states) == 1
    y1 = layer(x, x, training=True)
    y2 = layer(x, x, training=True)
    assert not np.allclose(ops.convert_to_numpy(y1), ops.convert_to_numpy(y2))


@pytest.mark.parametrize("mode", ["eager", "graph", "xla"])
def test_scale_kept_gradient_is_the_same_masking(mode):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(3, 4, 5)).astype("float32")
    upstream = rng.normal(size=(3, 4, 5)).astype("float32")
    keep = rng.random((3, 4, 5)) > 0.3
    # A mask that broadcasts (noise_shape) too.
    keep_rows = rng.random((3, 1, 5)) > 0.3

    def dropped(x):
        return ops.sum(
            scale_kept(x, keep, 1.25) + scale_kept(x, keep_rows, 1.25) * upstream
        )

    value, (gradient,) = value_and_gradients(dropped, (x,), mode)
    by_hand = 1.25 * (keep + keep_rows * upstream)
    np.testing.assert_allclose(value, np.sum(x * by_hand), rtol=1e-5)
    np.testing.assert_allclose(gradient, by_hand, rtol=1e-5, atol=1e-6)
