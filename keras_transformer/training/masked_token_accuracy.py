"""Token accuracy over real (non-padding) target tokens."""

import keras
from keras import ops

from keras_transformer.training.token_utils import label_logits


@keras.saving.register_keras_serializable(package="keras_transformer")
class MaskedTokenAccuracy(keras.metrics.Metric):
    """Fraction of real target tokens whose argmax prediction is right.

    A prediction is right when the label's logit is the largest (an exact tie
    with another token, which argmax would break by index, counts as right).
    This is a max and a gather: Keras' `ops.argmax` on the TensorFlow backend
    adds a negative-zero fix-up that made the metric much slower
    (docs/experiment-log.md, "Label smoothing and accuracy kernels").

    Positions whose label is `pad_id` count neither as right nor as wrong. The
    running totals are sums, so replicas and batches of different sizes
    combine exactly.

    Args:
        pad_id: int. Label id to ignore. Defaults to `0`.
        name: str. Defaults to `"accuracy"`.
    """

    def __init__(self, pad_id=0, name="accuracy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.pad_id = pad_id
        self.correct = self.add_variable(shape=(), initializer="zeros", name="correct")
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = ops.cast(y_true, "int32")
        real = ops.cast(ops.not_equal(y_true, self.pad_id), "float32")
        # [B, T, V] -> [B, T]: right where the label's logit is the largest.
        best = ops.max(ops.cast(y_pred, "float32"), axis=-1)
        right = ops.cast(label_logits(y_true, y_pred) >= best, "float32") * real
        self.correct.assign_add(ops.sum(right))
        self.total.assign_add(ops.sum(real))

    def update_from_token_statistics(self, y_true, statistics):
        """Updates from the chunked output loss's per-token `"right"` (no logits).

        Args:
            y_true: int tensor `[B, T]`.
            statistics: dict with `"right"`, float `[B * T]`, 1.0 where a real
                token's label logit is the largest (see
                `chunked_softmax_cross_entropy`).
        """
        real = ops.cast(
            ops.not_equal(ops.cast(y_true, "int32"), self.pad_id), "float32"
        )
        self.correct.assign_add(ops.sum(statistics["right"]))
        self.total.assign_add(ops.sum(real))

    def result(self):
        return ops.divide_no_nan(self.correct, self.total)

    def reset_state(self):
        self.correct.assign(0.0)
        self.total.assign(0.0)

    def get_config(self):
        return {**super().get_config(), "pad_id": self.pad_id}
