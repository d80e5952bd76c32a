import json

import keras
import numpy as np
import pytest

from keras_transformer.training import LearningCurveLog, read_learning_curve


class _DevScore(keras.callbacks.Callback):
    """Stands in for `BleuCallback`: adds `dev_bleu` every 4 batches."""

    def on_train_batch_end(self, batch, logs=None):
        if (batch + 1) % 4 == 0:
            logs["dev_bleu"] = 10.0 + batch


def _fit(model, path, batches, every=4, loss_every=None):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(batches * 2, 3)), rng.normal(size=(batches * 2, 1))
    callbacks = [_DevScore(), LearningCurveLog(str(path), every, loss_every)]
    model.fit(x, y, batch_size=2, epochs=1, verbose=0, callbacks=callbacks)


def _model():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    return model


def test_rows_every_n_updates_with_loss_and_dev_score(tmp_path):
    path = tmp_path / "curve.jsonl"
    _fit(_model(), path, batches=8)
    rows = read_learning_curve(str(path))
    assert [row["step"] for row in rows] == [4, 8]
    assert [row["dev_bleu"] for row in rows] == [13.0, 17.0]
    assert all(row["loss"] > 0 and row["minutes"] >= 0 for row in rows)
    assert rows[0]["minutes"] <= rows[1]["minutes"]


def test_a_resumed_run_continues_the_curve_and_replaces_later_rows(tmp_path):
    path = tmp_path / "curve.jsonl"
    model = _model()
    _fit(model, path, batches=8)
    # As if the run were killed after step 8 and its backup were from step 4:
    # the row of step 8 is replaced, not duplicated.
    model.optimizer.iterations.assign(4)
    with open(path, "a") as file:
        file.write(json.dumps({"step": 12, "minutes": 9.0, "loss": 1.0}) + "\n")
    _fit(model, path, batches=8)
    steps = [row["step"] for row in read_learning_curve(str(path))]
    assert steps == [4, 8, 12]


def test_loss_rows_between_and_a_last_row_make_a_short_run_a_curve(tmp_path):
    # Dev scores every 8 updates, the loss every 3, and the last update's:
    # a run of 5 updates (shorter than one dev interval) still has a curve.
    path = tmp_path / "curve.jsonl"
    _fit(_model(), path, batches=5, every=8, loss_every=3)
    rows = read_learning_curve(str(path))
    assert [row["step"] for row in rows] == [3, 5]
    assert not any("dev_bleu" in row for row in rows)
    path = tmp_path / "longer.jsonl"
    _fit(_model(), path, batches=9, every=4, loss_every=3)
    rows = read_learning_curve(str(path))
    assert [row["step"] for row in rows] == [3, 4, 6, 8, 9]
    assert [row.get("dev_bleu") for row in rows] == [None, 13.0, None, 17.0, None]


def test_no_file_reads_as_no_rows(tmp_path):
    assert read_learning_curve(str(tmp_path / "none.jsonl")) == []


def test_bad_interval_names_the_value(tmp_path):
    with pytest.raises(ValueError, match="Received: every_n_steps=0"):
        LearningCurveLog(str(tmp_path / "c.jsonl"), 0)
