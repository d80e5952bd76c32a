"""Per-token perplexity over real target tokens (Table 3's "PPL (dev)")."""

import keras
from keras import ops

from keras_transformer.training.token_utils import label_negative_log_probs


@keras.saving.register_keras_serializable(package="keras_transformer")
class Perplexity(keras.metrics.Metric):
    """exp(mean negative log-likelihood per real target token), unsmoothed.

    Table 3 lists "perplexities [...] per-wordpiece, according to our byte-pair
    encoding": this is that quantity, over whatever subword vocabulary the model
    uses. Label smoothing does not enter it (the paper notes smoothing "hurts
    perplexity").

    Args:
        pad_id: int. Label id to ignore. Defaults to `0`.
        name: str. Defaults to `"perplexity"`.
    """

    def __init__(self, pad_id=0, name="perplexity", **kwargs):
        super().__init__(name=name, **kwargs)
        self.pad_id = pad_id
        self.nll = self.add_variable(shape=(), initializer="zeros", name="nll")
        self.tokens = self.add_variable(shape=(), initializer="zeros", name="tokens")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = ops.cast(y_true, "int32")
        real = ops.cast(ops.not_equal(y_true, self.pad_id), "float32")
        nll = label_negative_log_probs(y_true, y_pred)
        self.nll.assign_add(ops.sum(nll * real))
        self.tokens.assign_add(ops.sum(real))

    def update_from_token_statistics(self, y_true, statistics):
        """Updates from the chunked output loss's `"negative_log_prob"` (no logits).

        Args:
            y_true: int tensor `[B, T]`.
            statistics: dict with `"negative_log_prob"`, float `[B * T]`,
                -log p(y) on real tokens and 0 on padding.
        """
        real = ops.cast(
            ops.not_equal(ops.cast(y_true, "int32"), self.pad_id), "float32"
        )
        self.nll.assign_add(ops.sum(statistics["negative_log_prob"]))
        self.tokens.assign_add(ops.sum(real))

    def result(self):
        return ops.exp(ops.divide_no_nan(self.nll, self.tokens))

    def reset_state(self):
        self.nll.assign(0.0)
        self.tokens.assign(0.0)

    def get_config(self):
        return {**super().get_config(), "pad_id": self.pad_id}
