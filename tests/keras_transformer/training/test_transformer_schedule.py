import keras
import numpy as np
import pytest

from keras_transformer.training import TransformerSchedule


def _rate(schedule, step_number):
    """The rate of the paper's step `step_number` (Keras iteration - 1)."""
    return float(schedule(step_number - 1))


def test_hand_computed_values_of_equation_3():
    schedule = TransformerSchedule(d_model=512, warmup_steps=4000)
    # step 1: 512^-0.5 * 1 * 4000^-1.5
    assert _rate(schedule, 1) == pytest.approx(512**-0.5 * 4000**-1.5, rel=1e-5)
    # the peak at step 4000: 512^-0.5 * 4000^-0.5 = 6.9877e-4
    assert _rate(schedule, 4000) == pytest.approx(6.98771e-4, rel=1e-5)
    # inverse square root after warmup: step 16000 is half the peak
    assert _rate(schedule, 16000) == pytest.approx(6.98771e-4 / 2, rel=1e-5)


def test_linear_warmup_then_decay():
    schedule = TransformerSchedule(d_model=64, warmup_steps=10)
    rates = [_rate(schedule, s) for s in range(1, 40)]
    warmup, decay = np.array(rates[:10]), np.array(rates[9:])
    np.testing.assert_allclose(warmup / warmup[0], np.arange(1, 11), rtol=1e-5)
    assert np.all(np.diff(decay) < 0)


def test_scale_multiplies_the_curve():
    base = TransformerSchedule(d_model=64, warmup_steps=10)
    scaled = TransformerSchedule(d_model=64, warmup_steps=10, scale=2.0)
    assert float(scaled(5)) == pytest.approx(2.0 * float(base(5)))


def test_serialization_and_use_in_adam():
    schedule = TransformerSchedule(d_model=128, warmup_steps=50, scale=0.5)
    revived = keras.optimizers.schedules.deserialize(
        keras.optimizers.schedules.serialize(schedule)
    )
    assert isinstance(revived, TransformerSchedule)
    assert revived.get_config() == schedule.get_config()
    optimizer = keras.optimizers.Adam(learning_rate=schedule)
    assert float(optimizer.learning_rate) == pytest.approx(float(schedule(0)))


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"d_model": 0}, "d_model=0"),
        ({"d_model": 8, "warmup_steps": -1}, "warmup_steps=-1"),
        ({"d_model": 8, "scale": 0.0}, "scale=0.0"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TransformerSchedule(**kwargs)
