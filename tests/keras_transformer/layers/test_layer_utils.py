import keras
import pytest

from keras_transformer.layers.layer_utils import (
    check_one_of,
    check_positive_int,
    check_rate,
    clone_initializer,
    head_dims,
)


@pytest.mark.parametrize("value", [0, -3, 2.0, True, "8"])
def test_check_positive_int_names_the_value(value):
    with pytest.raises(ValueError, match=f"Received: num_heads={value!r}"):
        check_positive_int("num_heads", value)


def test_check_positive_int_accepts_none_when_allowed():
    check_positive_int("key_dim", None, allow_none=True)
    with pytest.raises(ValueError, match="key_dim=None"):
        check_positive_int("key_dim", None)


@pytest.mark.parametrize("value", [-0.1, 1.0, 1.5, "0.1", None])
def test_check_rate_rejects_out_of_range(value):
    with pytest.raises(ValueError, match=f"Received: dropout={value!r}"):
        check_rate("dropout", value)


def test_check_one_of():
    check_one_of("kind", "a", ("a", "b"))
    with pytest.raises(ValueError, match="Received: kind='c'"):
        check_one_of("kind", "c", ("a", "b"))


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
