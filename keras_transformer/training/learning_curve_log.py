"""Training loss (and dev scores, when logged) at regular steps, as JSON lines."""

import json
import os
import time

import keras

from keras_transformer.training.atomic_files import atomic_write_text
from keras_transformer.training.step_counter import optimizer_step
from keras_transformer.validation import check_positive_int

# The dev scores a row takes from the batch logs: translation's BLEU and
# chrF, parsing's labelled bracket F1.
DEV_SCORES = ("dev_bleu", "dev_chrf", "dev_f1")


class LearningCurveLog(keras.callbacks.Callback):
    """Appends `{"step", "minutes", "loss", ...}` to a JSON-lines file.

    A row is written every `every_n_steps` updates (global steps, so a resumed
    run continues the curve) with the training loss as Keras logs it (the mean
    over the epoch so far), the minutes of training (a resumed run continues
    from the file's last row) and whichever of `dev_bleu`, `dev_chrf` and
    `dev_f1` a callback placed before this one added to the same batch's logs
    (`BleuCallback` with the same `every_n_steps`, or the parsing demo's dev
    F1); rows with the loss alone every `loss_every_n_steps` updates between
    them, and one at the last update when training ends, so that a run shorter
    than one `every_n_steps` still has a curve. Each row is flushed as it
    is written, so a killed run keeps its curve; rows at or past the start
    step of a resumed run are replaced.
    `keras_transformer.visualization.plot_learning_curve` draws the file.

    Args:
        path: str. The JSON-lines file.
        every_n_steps: int. Updates between rows (with the dev scores).
        loss_every_n_steps: int or `None`. Updates between rows of the loss
            alone. Defaults to `None`: `every_n_steps`.
    """

    def __init__(self, path, every_n_steps, loss_every_n_steps=None):
        super().__init__()
        check_positive_int("every_n_steps", every_n_steps)
        if loss_every_n_steps is not None:
            check_positive_int("loss_every_n_steps", loss_every_n_steps)
        self.path = path
        self.every_n_steps = every_n_steps
        self.loss_every_n_steps = loss_every_n_steps or every_n_steps

    def on_train_begin(self, logs=None):
        self._step = optimizer_step(self.model)
        rows = [
            row for row in read_learning_curve(self.path) if row["step"] <= self._step
        ]
        self._minutes_before = rows[-1]["minutes"] if rows else 0.0
        self._start = time.monotonic()
        self._written = self._step
        self._logs = None
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        atomic_write_text("".join(json.dumps(row) + "\n" for row in rows), self.path)

    def on_train_batch_end(self, batch, logs=None):
        self._step = optimizer_step(self.model)
        if not logs or "loss" not in logs:
            return
        self._logs = dict(logs)
        due = not self._step % self.every_n_steps
        if due or not self._step % self.loss_every_n_steps:
            self._write(logs, scores=due)

    def on_train_end(self, logs=None):
        if self._logs is not None and self._written != self._step:
            self._write(self._logs, scores=False)

    def _write(self, logs, scores):
        if self._step == self._written:  # one row per step (accumulation)
            return
        minutes = self._minutes_before + (time.monotonic() - self._start) / 60.0
        row = {"step": self._step, "minutes": round(minutes, 3)}
        row["loss"] = round(float(logs["loss"]), 5)
        for key in DEV_SCORES if scores else ():
            if key in logs:
                row[key] = round(float(logs[key]), 3)
        with open(self.path, "a", encoding="utf-8") as file:
            file.write(json.dumps(row) + "\n")
        self._written = self._step


def read_learning_curve(path):
    """The rows of a `LearningCurveLog` file (an empty list if there is none)."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]
