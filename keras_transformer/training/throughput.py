"""Training throughput in real target tokens per second, for logs and TensorBoard."""

import time

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_transformer")
class TargetTokens(keras.metrics.Metric):
    """The number of real (non-padding) target tokens seen since the last reset.

    Args:
        pad_id: int. Label id to ignore. Defaults to `0`.
        name: str. Defaults to `"target_tokens"`.
    """

    def __init__(self, pad_id=0, name="target_tokens", **kwargs):
        super().__init__(name=name, **kwargs)
        self.pad_id = pad_id
        self.tokens = self.add_variable(shape=(), initializer="zeros", name="tokens")

    def update_state(self, y_true, y_pred=None, sample_weight=None):
        real = ops.not_equal(ops.cast(y_true, "int32"), self.pad_id)
        self.tokens.assign_add(ops.sum(ops.cast(real, "float32")))

    def update_from_token_statistics(self, y_true, statistics):
        """The same count, under the chunked output loss (no logits)."""
        self.update_state(y_true)

    def result(self):
        return ops.convert_to_tensor(self.tokens)

    def reset_state(self):
        self.tokens.assign(0.0)

    def get_config(self):
        return {**super().get_config(), "pad_id": self.pad_id}


class ThroughputLogger(keras.callbacks.Callback):
    """Adds `tokens_per_second` (real target tokens) to batch and epoch logs.

    Reads the `target_tokens` metric (`TargetTokens`, which `compile_transformer`
    adds) and the wall-clock time since the epoch began. Place it before
    `keras.callbacks.TensorBoard` in the callback list so the value is logged.
    """

    def on_epoch_begin(self, epoch, logs=None):
        self._start = time.perf_counter()

    def _add_rate(self, logs):
        if logs is not None and "target_tokens" in logs:
            elapsed = max(time.perf_counter() - self._start, 1e-9)
            logs["tokens_per_second"] = float(logs["target_tokens"]) / elapsed

    def on_train_batch_end(self, batch, logs=None):
        self._add_rate(logs)

    def on_epoch_end(self, epoch, logs=None):
        self._add_rate(logs)
