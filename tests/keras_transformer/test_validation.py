import math

import pytest

from keras_transformer.validation import (
    check_non_negative_float,
    check_non_negative_int,
    check_one_of,
    check_positive_float,
    check_positive_int,
    check_rate,
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


@pytest.mark.parametrize("value", [-1, 2.0, True, None])
def test_check_non_negative_int_names_the_value(value):
    check_non_negative_int("max_extra_length", 0)
    with pytest.raises(ValueError, match=f"Received: max_extra_length={value!r}"):
        check_non_negative_int("max_extra_length", value)


@pytest.mark.parametrize("value", [-0.1, math.nan, math.inf, "0.6", True])
def test_check_non_negative_float_rejects_nan_and_negatives(value):
    check_non_negative_float("alpha", 0)
    check_non_negative_float("alpha", 0.6)
    with pytest.raises(ValueError, match="Received: alpha="):
        check_non_negative_float("alpha", value)


@pytest.mark.parametrize("value", [0, -2.5, math.nan, math.inf, "1"])
def test_check_positive_float_rejects_zero_nan_and_negatives(value):
    check_positive_float("minutes", 0.5)
    check_positive_float("minutes", None, allow_none=True)
    with pytest.raises(ValueError, match="Received: minutes="):
        check_positive_float("minutes", value)


def test_check_dataclass_fields_names_the_unknown_ones():
    import dataclasses

    from keras_transformer.validation import check_dataclass_fields

    @dataclasses.dataclass
    class Settings:
        beam_size: int = 4

    check_dataclass_fields(Settings, ["beam_size"])
    with pytest.raises(ValueError, match=r"Settings field.*Received: \['beems'\]"):
        check_dataclass_fields(Settings, {"beam_size": 1, "beems": 2})
