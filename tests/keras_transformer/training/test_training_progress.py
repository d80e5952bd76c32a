import keras
import numpy as np
import pytest

from keras_transformer.training import TrainingProgress
from keras_transformer.training.training_progress import format_seconds


def _model(accumulation=None):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(
        optimizer=keras.optimizers.SGD(0.01, gradient_accumulation_steps=accumulation),
        loss="mse",
    )
    return model


def _data(batches):
    rng = np.random.default_rng(0)
    return rng.normal(size=(batches * 2, 3)), rng.normal(size=(batches * 2, 1))


def test_bar_counts_updates_to_the_total_and_prints_one_estimate(capsys):
    model = _model()
    x, y = _data(12)
    lines = []
    progress = TrainingProgress(20, estimate_after=5, print_fn=lines.append)
    model.fit(x, y, batch_size=2, epochs=1, verbose=0, callbacks=[progress])
    out = capsys.readouterr().out
    # Keras' bar over the run's 20 updates, of which 12 are done in this call.
    assert "12/20" in out and "loss:" in out
    assert len([line for line in lines if "Expected training time" in line]) == 1
    assert "updates 2-5" in lines[0]
    # 15 updates left after the 5th, at the measured rate.
    assert 0.0 <= progress.estimate_seconds < 60.0


def test_bar_starts_where_a_resumed_run_stands(capsys):
    model = _model()
    x, y = _data(4)
    model.fit(x, y, batch_size=2, epochs=1, verbose=0)  # 4 updates before
    progress = TrainingProgress(10, estimate_after=3, print_fn=lambda line: None)
    model.fit(x, y, batch_size=2, epochs=1, verbose=0, callbacks=[progress])
    out = capsys.readouterr().out
    # 6 updates were left: the bar's total; 4 are done.
    assert "4/6" in out and "/10" not in out


def test_bar_counts_updates_not_batches_under_accumulation(capsys):
    model = _model(accumulation=2)
    x, y = _data(8)
    progress = TrainingProgress(4, accumulation=2, print_fn=lambda line: None)
    model.fit(x, y, batch_size=2, epochs=1, verbose=0, callbacks=[progress])
    assert "4/4" in capsys.readouterr().out
    assert progress._done == 4


def test_time_budget_shows_the_minutes_left(capsys):
    model = _model()
    x, y = _data(3)
    progress = TrainingProgress(100, max_minutes=5.0, print_fn=lambda line: None)
    model.fit(x, y, batch_size=2, epochs=1, verbose=0, callbacks=[progress])
    out = capsys.readouterr().out
    assert "min left: 5.0" in out or "min left: 4.9" in out


def test_bad_total_names_the_value():
    with pytest.raises(ValueError, match="Received: total_steps=0"):
        TrainingProgress(0)


@pytest.mark.parametrize(
    "seconds, text", [(0, "0:00"), (59.6, "1:00"), (605, "10:05"), (3725, "1:02:05")]
)
def test_format_seconds(seconds, text):
    assert format_seconds(seconds) == text
