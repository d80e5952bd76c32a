"""Backup for resuming an interrupted `model.fit` exactly where it stopped."""

import contextlib
import glob
import math
import os
import warnings
import zipfile

import h5py
import keras
import numpy as np

from keras_transformer.training.atomic_files import (
    atomic_save_weights,
    atomic_write_json,
    publishing,
    read_json,
)
from keras_transformer.training.corrupt_file_error import (
    CorruptFileError,
    check_weights_file,
)
from keras_transformer.training.distribution import is_chief
from keras_transformer.training.step_counter import optimizer_step

SEED_STATE_SUFFIX = "seed_generator_state"


class TrainingBackup(keras.callbacks.Callback):
    """Saves the whole training state at every epoch end and restores it.

    Used by `fit_resumable`, where an "epoch" is a fixed number of steps of an
    endless batch stream, so a restored epoch count is also an exact position in
    the data. Unlike `keras.callbacks.BackupAndRestore` (which restarts an
    interrupted epoch from its first batch), nothing is repeated or skipped.

    The state is the weights with the optimizer (moments and step, hence the
    learning-rate schedule) in `backup-<epoch>.weights.h5`, plus the states of
    the dropout seed generators in `backup-<epoch>.seeds.npz` (Keras does not put
    them in weight files; without them a resumed run would draw other dropout
    masks). `backup.json` names the epoch of the newest complete pair and is
    replaced last, atomically, so a kill at any moment leaves a consistent
    backup. No backup is written when the epoch's loss is not finite: the last
    good state stays on disk.

    With several workers (`MultiWorkerMirroredStrategy`) `backup_dir` must be on
    a file system they share: every worker restores from it, and only the chief
    writes it (`is_chief`).

    Args:
        backup_dir: str. Directory of the backup files.
    """

    def __init__(self, backup_dir):
        super().__init__()
        self.backup_dir = backup_dir
        self.state_path = os.path.join(backup_dir, "backup.json")

    def _paths(self, epoch):
        base = os.path.join(self.backup_dir, f"backup-{epoch:06d}")
        return f"{base}.weights.h5", f"{base}.seeds.npz"

    def restore(self, model):
        """Loads the backup into `model` (built and compiled); returns its epoch.

        Returns:
            The number of completed epochs of the backup, 0 when there is none.
        """
        if not os.path.exists(self.state_path):
            return 0
        hint = (
            f"restore it, or remove {self.backup_dir} to train again from "
            "step 0 (the checkpoints stay)"
        )
        state = read_json(self.state_path)
        epoch = state.get("epoch")
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
            raise CorruptFileError(
                self.state_path, "a backup state", f"epoch={epoch!r}", hint
            )
        weights_path, seeds_path = self._paths(epoch)
        check_weights_file(weights_path, hint)
        # The optimizer's variables belong to the model's strategy (the
        # default one on other backends).
        strategy = getattr(model, "distribute_strategy", None)
        with strategy.scope() if strategy is not None else contextlib.nullcontext():
            if not model.optimizer.built:
                model.optimizer.build(model.trainable_variables)
            try:
                crossing = _loss_scaling_changed(model, weights_path)
                with warnings.catch_warnings():
                    if crossing:  # Keras warns, then skips the optimizer
                        warnings.filterwarnings(
                            "ignore", "Skipping variable loading for optimizer"
                        )
                    model.load_weights(weights_path)
                if crossing:
                    _load_unscaled_optimizer_state(model, weights_path)
            except OSError as error:
                reason = " ".join(str(error).split())[:200]
                raise CorruptFileError(
                    weights_path, "a readable backup", reason, hint
                ) from None
        try:
            seeds = np.load(seeds_path)
        except (OSError, ValueError, zipfile.BadZipFile) as error:
            reason = " ".join(str(error).split())[:200]
            raise CorruptFileError(
                seeds_path, "a backup's seed states", reason, hint
            ) from None
        with seeds:
            states = _seed_states(model)
            if len(seeds.files) != len(states):
                raise ValueError(
                    f"The backup in {self.backup_dir} has {len(seeds.files)} seed "
                    f"states; the model has {len(states)}. Was the model changed?"
                )
            for i, variable in enumerate(states):
                variable.assign(seeds[f"state_{i}"])
        return epoch

    def on_epoch_end(self, epoch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(loss):
            print(
                f"Not backing up epoch {epoch + 1}: its loss is {loss}. The backup "
                f"in {self.backup_dir} keeps the last finite state."
            )
            return
        if not is_chief(getattr(self.model, "distribute_strategy", None)):
            return
        os.makedirs(self.backup_dir, exist_ok=True)
        weights_path, seeds_path = self._paths(epoch + 1)
        atomic_save_weights(self.model, weights_path)
        seeds = {
            f"state_{i}": np.asarray(keras.ops.convert_to_numpy(v.value))
            for i, v in enumerate(_seed_states(self.model))
        }
        with publishing(f"{seeds_path}.partial.npz", seeds_path):
            np.savez(f"{seeds_path}.partial.npz", **seeds)
        os.replace(f"{seeds_path}.partial.npz", seeds_path)
        step = optimizer_step(self.model)
        atomic_write_json({"epoch": epoch + 1, "step": step}, self.state_path)
        for old in glob.glob(os.path.join(self.backup_dir, "backup-*")):
            if old not in (weights_path, seeds_path):
                os.remove(old)


def _loss_scaling_changed(model, weights_path):
    """Whether the backup and `model` differ in loss scaling: one was
    trained in `mixed_float16` (a `LossScaleOptimizer`, its Adam stored as
    `inner_optimizer`) and the other not."""
    with h5py.File(weights_path, "r") as file:
        saved = "optimizer/inner_optimizer" in file
    return saved != isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)


def _load_unscaled_optimizer_state(model, weights_path):
    """Loads the backup's Adam state (step and moments) into `model`'s Adam
    across a change of loss scaling, which `load_weights` skips with a
    warning (the optimizers differ in layout). Resuming in `mixed_float16`
    starts the loss scale at its initial value; resuming out of it drops the
    scale."""
    optimizer = model.optimizer
    scaled = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
    group = "optimizer/vars" if scaled else "optimizer/inner_optimizer/vars"
    with h5py.File(weights_path, "r") as file:
        store = {key: np.asarray(value) for key, value in file[group].items()}
    (optimizer.inner_optimizer if scaled else optimizer).load_own_variables(store)
    print(
        f"Resumed a backup trained {'without' if scaled else 'with'} loss "
        "scaling: the optimizer's step and moments carry over"
        + ("; the loss scale starts again." if scaled else ".")
    )


def _seed_states(model):
    """The dropout seed-generator state variables of `model`, in a fixed order."""
    return [v for v in model.variables if v.path.endswith(SEED_STATE_SUFFIX)]
