import keras
import pytest

from keras_transformer.layers.layer_utils import clone_initializer, head_dims


def test_head_dims_derives_d_model_over_h():
    assert head_dims(512, 8) == (64, 64)
    assert head_dims(512, 8, key_dim=16) == (16, 64)  # Table 3 row B1
    assert head_dims(30, 4, key_dim=8, value_dim=8) == (8, 8)
    with pytest.raises(ValueError, match="d_model=30, num_heads=4"):
        head_dims(30, 4)


def test_clone_initializer_is_a_fresh_equal_copy():
    initializer = keras.initializers.GlorotUniform(seed=3)
    clone = clone_initializer(initializer)
    assert clone is not initializer
    assert clone.get_config() == initializer.get_config()
