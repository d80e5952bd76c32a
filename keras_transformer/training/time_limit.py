"""Stops `model.fit` at the last epoch end that fits a wall-clock budget."""

import time

import keras


class TimeLimit(keras.callbacks.Callback):
    """Ends training when another epoch would overrun `minutes`.

    Decides at epoch ends only, so that an interrupted run stops at a backup
    point (`fit_resumable`'s epochs are fixed numbers of steps): after each
    epoch it stops if the elapsed time plus the longest epoch so far would
    exceed the budget. The paper trained for fixed step counts (§5.2); a time
    budget serves short runs such as the demo. Place it before callbacks that
    read `model.stop_training` at epoch end (`RotatingCheckpoints` writes a
    final checkpoint then).

    Args:
        minutes: float. The budget, counted from the start of training.
    """

    def __init__(self, minutes):
        super().__init__()
        if not isinstance(minutes, (int, float)) or not minutes > 0:
            raise ValueError(f"`minutes` must be positive. Received: minutes={minutes}")
        self.minutes = minutes
        self._start = None
        self._epoch_start = None
        self._longest_epoch = 0.0

    def on_train_begin(self, logs=None):
        self._start = time.monotonic()

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start = time.monotonic()

    def on_epoch_end(self, epoch, logs=None):
        now = time.monotonic()
        self._longest_epoch = max(self._longest_epoch, now - self._epoch_start)
        if now - self._start + self._longest_epoch > 60.0 * self.minutes:
            self.model.stop_training = True
