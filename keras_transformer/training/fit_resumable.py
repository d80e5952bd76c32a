"""`model.fit` for a number of steps that survives being killed (paper §5.2, §6.1)."""

import contextlib
import math
import os

import keras

from keras_transformer.training.distribution import is_chief, worker_count
from keras_transformer.training.loss_scale_log import LossScaleLog
from keras_transformer.training.rotating_checkpoints import RotatingCheckpoints
from keras_transformer.training.throughput import ThroughputLogger
from keras_transformer.training.time_limit import TimeLimit
from keras_transformer.training.training_backup import TrainingBackup
from keras_transformer.training.training_progress import TrainingProgress
from keras_transformer.training.xla_compilation import align_trace_names


def planned_updates(total_steps, steps_per_epoch, accumulation=1):
    """Updates `fit_resumable` trains for: `total_steps` batches rounded up
    to whole epochs of `steps_per_epoch`, `accumulation` batches to an
    update (rounded up).

    Examples:
        >>> planned_updates(130, 50, accumulation=2)  # 3 epochs of 50 batches
        75
    """
    epochs = math.ceil(total_steps / steps_per_epoch)
    return -(-epochs * steps_per_epoch // accumulation)


def fit_resumable(
    model,
    dataset,
    total_steps,
    output_dir,
    steps_per_epoch=100,
    checkpoint_every_steps=None,
    checkpoint_every_minutes=10.0,
    keep_checkpoints=5,
    record=None,
    callbacks=None,
    verbose="auto",
    max_minutes=None,
):
    """Trains `model` for `total_steps` batches of `dataset`, resuming if it can.

    The dataset is repeated into an endless stream and `model.fit` runs
    "epochs" of `steps_per_epoch` batches over it. After every such epoch a
    backup (weights, optimizer state, epoch) is written to
    `output_dir/backup/`. Started again with the same arguments after a crash or
    a SIGKILL, the function restores the backup and skips exactly the batches
    already trained on, so the step counter, the learning-rate schedule, the
    optimizer moments and the position in the data all continue. For the
    position to be exact, `dataset` must yield the same batch sequence every
    time it is built and iterated (a seeded shuffle; a pipeline without
    `deterministic=False`); skipping costs input-pipeline time, not training.

    Rotating checkpoints for averaging (§6.1) go to `output_dir/checkpoints/`
    (see `RotatingCheckpoints`); TensorBoard logs (loss, accuracy, perplexity,
    learning rate, target tokens/s, a `mixed_float16` run's loss scale) to
    `output_dir/logs/`; training
    stops with a message on a NaN loss, keeping the last finite backup and
    checkpoint.

    Under `MultiWorkerMirroredStrategy` every worker calls this with the same
    arguments and `output_dir` on a file system all workers share: each one
    restores the backup, and only the chief writes backup, checkpoints and logs
    (two workers writing one file fail or corrupt it). `max_minutes` is refused
    there: workers timing epochs on their own clocks could stop at different
    epochs and leave the others waiting in a collective.

    Args:
        model: a compiled model (compile it in the strategy's scope).
        dataset: a `tf.data.Dataset` of `(inputs, targets)` batches (one pass).
        total_steps: int. Batches to train on in all, across restarts, rounded
            up to a multiple of `steps_per_epoch`.
        output_dir: str. Where backup, checkpoints and logs go.
        steps_per_epoch: int. Batches per Keras epoch (the backup interval).
        checkpoint_every_steps: int or `None`.
        checkpoint_every_minutes: float or `None`. Defaults to `10.0` (§6.1).
        keep_checkpoints: int. Defaults to `5` (§6.1, base models).
        record: dict written beside each checkpoint.
        callbacks: more Keras callbacks.
        verbose: 1 or `"auto"`: a bar over the run's updates with loss,
            tokens/s and ETA, and the expected training time after the first
            updates (`TrainingProgress`); 2: `model.fit`'s line per epoch;
            0: silent.
        max_minutes: float or `None`. Also stop, at an epoch end, before this
            much wall-clock time has passed in this call (`TimeLimit`); a
            restarted run gets the budget again. Defaults to `None`.

    Returns:
        The `keras.callbacks.History` of this run (`None` if the backup was
        already complete).
    """
    for name, value in (
        ("total_steps", total_steps),
        ("steps_per_epoch", steps_per_epoch),
    ):
        if not isinstance(value, int) or value < 1:
            raise ValueError(
                f"`{name}` must be a positive integer. Received: {name}={value}"
            )
    # A Keras model's strategy on TensorFlow (other backends have none).
    strategy = getattr(model, "distribute_strategy", None)
    workers = worker_count(strategy)
    if max_minutes is not None and workers > 1:
        raise ValueError(
            "`max_minutes` needs one worker: workers could stop at different "
            f"epochs. Received: max_minutes={max_minutes} with {workers} workers"
        )
    # The optimizer's variables exist before the first step, as when a backup
    # is restored, so a fresh and a resumed run trace the same train step: XLA's
    # persistent compilation cache then serves the resumed run.
    with strategy.scope() if strategy is not None else contextlib.nullcontext():
        if not model.optimizer.built:
            model.optimizer.build(model.trainable_variables)
    backup = TrainingBackup(os.path.join(output_dir, "backup"))
    initial_epoch = backup.restore(model)
    epochs = math.ceil(total_steps / steps_per_epoch)
    if initial_epoch >= epochs:
        return None
    stream = dataset.repeat().skip(initial_epoch * steps_per_epoch)
    checkpoints = RotatingCheckpoints(
        os.path.join(output_dir, "checkpoints"),
        every_steps=checkpoint_every_steps,
        every_minutes=checkpoint_every_minutes,
        keep=keep_checkpoints,
        record=record,
    )
    if getattr(model, "jit_compile", False):
        # The train step's names, and so XLA's cache keys, the same whatever
        # ran before: preparing the data, or restoring a backup.
        align_trace_names()
    progress = []
    if verbose in (1, "auto"):
        # Updates toward the run's total with an ETA, instead of fit's
        # "Epoch 3/2000" (`TrainingProgress`).
        accumulation = getattr(model.optimizer, "gradient_accumulation_steps", None)
        accumulation = accumulation or 1
        progress = [
            TrainingProgress(
                planned_updates(total_steps, steps_per_epoch, accumulation),
                accumulation,
                max_minutes,
            )
        ]
        verbose = 0
    return model.fit(
        stream,
        epochs=epochs,
        steps_per_epoch=steps_per_epoch,
        initial_epoch=initial_epoch,
        callbacks=[
            *([TimeLimit(max_minutes)] if max_minutes is not None else []),
            keras.callbacks.TerminateOnNaN(),
            backup,
            checkpoints,
            ThroughputLogger(),
            LossScaleLog(),
            *progress,
            *(
                [keras.callbacks.TensorBoard(os.path.join(output_dir, "logs"))]
                if is_chief(strategy)
                else []
            ),
            *(callbacks or []),
        ],
        verbose=verbose,
        # The dataset shuffles itself (seeded, resumable); Keras would only
        # warn that it ignores `shuffle=True` for a `tf.data.Dataset`.
        shuffle=False,
    )
