"""Checkpoints every N steps and/or minutes, the last K kept, each with a record."""

import glob
import math
import os
import re
import time

import keras

from keras_transformer.training.atomic_files import (
    atomic_save_weights,
    atomic_write_json,
)
from keras_transformer.training.distribution import is_chief
from keras_transformer.training.step_counter import optimizer_step
from keras_transformer.validation import check_positive_int

CHECKPOINT_PATTERN = re.compile(r"ckpt-(\d+)\.weights\.h5")
WEIGHTS_SUFFIX = ".weights.h5"


class RotatingCheckpoints(keras.callbacks.Callback):
    """Writes `ckpt-<step>.weights.h5` plus `ckpt-<step>.json` and keeps the last K.

    Paper §6.1: checkpoints "written at 10-minute intervals"; the base models
    average the last 5, the big ones the last 20. A checkpoint is due when
    `every_steps` updates or `every_minutes` minutes have passed since the last
    one (either may be `None`); it is written at the end of an epoch (in
    `fit_resumable` an epoch is a fixed number of steps), so the time
    resolution is one epoch. The record beside each checkpoint is `record`
    (model config, tokenizer fingerprint, batch size, strategy, ...) plus the
    step. Checkpoints with a non-finite loss are not written. With several
    workers only the chief writes (`is_chief`), into a directory they share.

    Args:
        directory: str. Where the checkpoints go.
        every_steps: int or `None`. Defaults to `None`.
        every_minutes: float or `None`. Defaults to `10.0`, the paper's.
        keep: int. How many to keep. Defaults to `5`.
        record: dict. JSON-serialisable description written beside each one.
    """

    def __init__(
        self, directory, every_steps=None, every_minutes=10.0, keep=5, record=None
    ):
        super().__init__()
        if every_steps is None and every_minutes is None:
            raise ValueError(
                "Set `every_steps`, `every_minutes` or both. Received: "
                "every_steps=None, every_minutes=None"
            )
        check_positive_int("keep", keep)
        self.directory = directory
        self.every_steps = every_steps
        self.every_minutes = every_minutes
        self.keep = keep
        self.record = dict(record or {})
        self._last_step = None
        self._last_time = None

    def on_train_begin(self, logs=None):
        self._last_step = optimizer_step(self.model)
        self._last_time = time.monotonic()

    def on_epoch_end(self, epoch, logs=None):
        step = optimizer_step(self.model)
        due_by_steps = (
            self.every_steps is not None and step - self._last_step >= self.every_steps
        )
        due_by_time = (
            self.every_minutes is not None
            and time.monotonic() - self._last_time >= 60.0 * self.every_minutes
        )
        final = self.model.stop_training or epoch + 1 == self.params.get("epochs")
        if not (due_by_steps or due_by_time or final) or step == self._last_step:
            return
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(loss):
            return
        self.save(step)

    def save(self, step):
        """Writes the checkpoint of `step` and its record, then prunes old ones.

        Other workers than the chief only note the step and time.
        """
        if not is_chief(getattr(self.model, "distribute_strategy", None)):
            self._last_step, self._last_time = step, time.monotonic()
            return
        os.makedirs(self.directory, exist_ok=True)
        base = os.path.join(self.directory, f"ckpt-{step:08d}")
        atomic_write_json({**self.record, "step": step}, f"{base}.json")
        atomic_save_weights(self.model, f"{base}.weights.h5")
        self._last_step, self._last_time = step, time.monotonic()
        for old in list_checkpoints(self.directory)[: -self.keep]:
            os.remove(old)
            if os.path.exists(record_path(old)):
                os.remove(record_path(old))


def record_path(weights_path):
    """The JSON record beside a `.weights.h5` file (checkpoint or average):
    `ckpt-00000100.weights.h5` -> `ckpt-00000100.json`."""
    weights_path = os.fspath(weights_path)
    if not weights_path.endswith(WEIGHTS_SUFFIX):
        raise ValueError(
            f"Expected a path ending in {WEIGHTS_SUFFIX}. "
            f"Received: weights_path={weights_path!r}"
        )
    return weights_path[: -len(WEIGHTS_SUFFIX)] + ".json"


def checkpoint_step(path):
    """The step of a `ckpt-<step>.weights.h5` path."""
    match = CHECKPOINT_PATTERN.fullmatch(os.path.basename(path))
    if match is None:
        raise ValueError(
            f"Expected a ckpt-<step>.weights.h5 file. Received: path={path!r}"
        )
    return int(match[1])


def list_checkpoints(directory):
    """The `ckpt-<step>.weights.h5` files of `directory`, oldest step first."""
    paths = [
        path
        for path in glob.glob(os.path.join(directory, "ckpt-*.weights.h5"))
        if CHECKPOINT_PATTERN.fullmatch(os.path.basename(path))
    ]
    return sorted(paths, key=checkpoint_step)
