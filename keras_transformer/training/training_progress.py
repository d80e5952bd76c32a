"""A progress bar over the updates of a whole training run, with its ETA."""

import sys
import time

import keras

from keras_transformer.training.step_counter import optimizer_step
from keras_transformer.validation import check_positive_int


class TrainingProgress(keras.callbacks.Callback):
    """Shows updates toward the run's total, with loss, tokens/s and an ETA.

    `model.fit` counts epochs ("Epoch 3/2000"), which says little about a run
    trained for a number of updates (§5.2) in short resumable epochs
    (`fit_resumable`). This bar counts updates from where the run stands to
    `total_steps`, with Keras' own `Progbar` (its ETA follows the measured
    rate). Once the first `estimate_after` updates are done it prints the
    expected training time, measured from the updates after the first (which
    traces or compiles the step). With a time budget it also shows the
    minutes left. Place it after `ThroughputLogger` and `LossScaleLog`, whose
    `tokens_per_second` and `loss_scale` it shows; run `model.fit` with
    `verbose=0`.

    Args:
        total_steps: int. Updates at the end of the run.
        accumulation: int. Batches per update (gradient accumulation).
            Defaults to `1`.
        max_minutes: float or `None`. The run's time budget (`TimeLimit`).
        estimate_after: int. Updates timed for the printed estimate.
            Defaults to `50`.
        print_fn: callable for the estimate line. Defaults to `print`.
    """

    def __init__(
        self,
        total_steps,
        accumulation=1,
        max_minutes=None,
        estimate_after=50,
        print_fn=print,
    ):
        super().__init__()
        for name, value in (
            ("total_steps", total_steps),
            ("accumulation", accumulation),
            ("estimate_after", estimate_after),
        ):
            check_positive_int(name, value)
        self.total_steps = total_steps
        self.accumulation = accumulation
        self.max_minutes = max_minutes
        self.estimate_after = estimate_after
        self.print_fn = print_fn
        self.estimate_seconds = None
        self._bar = None

    def on_train_begin(self, logs=None):
        self._initial = optimizer_step(self.model)
        self._batches = 0
        self._done = 0
        self._start = time.monotonic()
        self._first_done = None
        self._bar = keras.utils.Progbar(
            self.total_steps - self._initial,
            unit_name="update",
            stateful_metrics=("loss", "tokens/s", "loss scale", "min left"),
            # Redrawn in place on a terminal; into a log file, a line every
            # 10 seconds rather than one per update.
            interval=0.05 if sys.stdout.isatty() else 10.0,
        )

    def on_train_batch_end(self, batch, logs=None):
        logs = logs or {}
        self._batches += 1
        if self._batches % self.accumulation:
            return
        self._done += 1
        now = time.monotonic()
        if self._done == 1:
            self._first_done = now
        elif self._done == self.estimate_after and self.estimate_seconds is None:
            per_update = (now - self._first_done) / (self._done - 1)
            remaining = self.total_steps - self._initial - self._done
            self.estimate_seconds = per_update * remaining
            if self.max_minutes is not None:
                left = 60.0 * self.max_minutes - (now - self._start)
                self.estimate_seconds = min(self.estimate_seconds, max(left, 0.0))
            self.print_fn(
                f"\nExpected training time: {format_seconds(self.estimate_seconds)} "
                f"more ({per_update:.3f} s per update, measured over updates "
                f"{self._initial + 2}-{self._initial + self._done})"
            )
        self._bar.update(self._done, self._values(logs, now))

    def _values(self, logs, now):
        values = [("loss", float(logs["loss"]))] if "loss" in logs else []
        if "tokens_per_second" in logs:
            values.append(("tokens/s", _Shown(logs["tokens_per_second"], 0)))
        if "loss_scale" in logs:  # mixed_float16 (`LossScaleLog`)
            values.append(("loss scale", _Shown(logs["loss_scale"], 0)))
        if self.max_minutes is not None:
            left = self.max_minutes - (now - self._start) / 60.0
            values.append(("min left", _Shown(max(left, 0.0), 1)))
        return values

    def on_train_end(self, logs=None):
        # A run stopped before its total (a time budget, a NaN loss) still
        # shows where it stopped, and ends the bar's line.
        if self._bar is not None and self._done < self._bar.target:
            self._bar.update(
                self._done, self._values(logs or {}, time.monotonic()), finalize=True
            )


class _Shown(float):
    """A float that Keras' `Progbar` prints with `digits` decimals (it
    formats every value with four: "tokens/s: 3845.0000")."""

    def __new__(cls, value, digits):
        shown = super().__new__(cls, value)
        shown.digits = digits
        return shown

    def __truediv__(self, other):  # Progbar divides by a count of 1
        return _Shown(float(self) / other, self.digits)

    def __format__(self, spec):
        return f"{float(self):,.{self.digits}f}"


def format_seconds(seconds):
    """`seconds` as `"M:SS"`, or `"H:MM:SS"` from an hour."""
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}:{minutes:02d}:{seconds:02d}"
    return f"{minutes}:{seconds:02d}"
