"""The dynamic loss scale of a `mixed_float16` run, in the logs."""

import keras
import numpy as np


class LossScaleLog(keras.callbacks.Callback):
    """Adds `loss_scale` to batch and epoch logs when the optimiser scales
    the loss (`keras.optimizers.LossScaleOptimizer`, which `model.compile`
    wraps around the optimiser of a `mixed_float16` model).

    The scale halves at every step whose gradients are not finite (the step
    is skipped) and doubles after 2,000 finite steps (Keras' defaults): a
    scale that keeps falling says the float16 run is overflowing. Place it
    before `TrainingProgress` (which shows it) and
    `keras.callbacks.TensorBoard` (which records the epoch's value); with
    another precision it adds nothing.
    """

    def _add_scale(self, logs):
        optimizer = self.model.optimizer
        if logs is not None and isinstance(
            optimizer, keras.optimizers.LossScaleOptimizer
        ):
            scale = optimizer.dynamic_scale
            scale = getattr(scale, "value", scale)
            logs["loss_scale"] = float(np.asarray(keras.ops.convert_to_numpy(scale)))

    def on_train_batch_end(self, batch, logs=None):
        self._add_scale(logs)

    def on_epoch_end(self, epoch, logs=None):
        self._add_scale(logs)
