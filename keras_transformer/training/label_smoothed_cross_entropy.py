"""Label-smoothed cross-entropy over real target tokens (paper §5.4)."""

import keras
from keras import ops

from keras_transformer.training.chunked_softmax_cross_entropy import (
    chunked_softmax_cross_entropy,
)
from keras_transformer.training.token_utils import global_token_count
from keras_transformer.validation import check_positive_int, check_rate


@keras.saving.register_keras_serializable(package="keras_transformer")
class LabelSmoothedCrossEntropy(keras.losses.Loss):
    """Cross-entropy against smoothed targets, averaged over real target tokens.

    Paper §5.4: "During training, we employed label smoothing of value
    eps_ls = 0.1 [36]." Following [36] (Szegedy et al.), the target distribution
    is q'(k) = (1 - eps_ls) * [k = y] + eps_ls / V, so the per-token loss is

        -sum_k q'(k) log p(k) = (1 - eps_ls) * -log p(y) + eps_ls * mean_k(-log p(k)).

    It is computed as the cross-entropy against the dense smoothed targets,
    which the TensorFlow backend runs as one fused softmax-cross-entropy kernel
    (loss and gradient in one pass over the `[B, T, V]` logits), faster than
    log-softmax, gather and mean with their gradients (figures in
    docs/experiment-log.md, "Label smoothing and accuracy kernels").

    Positions whose label is `pad_id` are ignored. The sum over real tokens is
    divided by the number of real tokens in the *global* batch: under a
    `tf.distribute` strategy each replica divides its local sum by the token
    count summed over all replicas, so the summed replica gradients equal the
    gradient one device would compute on the whole batch. (Keras' default
    `sum_over_batch_size` would instead average per-replica means, which
    weights tokens unequally when replicas hold different numbers of tokens.)

    With `chunk_size`, a `Transformer` compiled with this loss hands it the
    decoder output instead of the logits while training, and
    `decoder_output_loss` fuses the pre-softmax projection with the loss in
    row chunks (`chunked_softmax_cross_entropy`): the same loss and gradients
    without the `[B, T, V]` logits, their softmax and their gradient in
    memory. Called on logits (evaluation), it computes the same loss as
    without `chunk_size`.

    Args:
        label_smoothing: float. eps_ls. Defaults to `0.1`.
        pad_id: int. Label id to ignore. Defaults to `0`.
        chunk_size: int or `None`. Target tokens per chunk of the fused
            projection and loss, or `None` for the loss on logits. Defaults to
            `None`.
        name: str. Defaults to `"label_smoothed_cross_entropy"`.

    Call arguments:
        y_true: int tensor `[B, T]`, the target ids.
        y_pred: float tensor `[B, T, V]`, logits.

    Returns:
        A scalar.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §5.4.
        - [Szegedy et al., 2016. Rethinking the Inception Architecture for Computer
          Vision](https://arxiv.org/abs/1512.00567), §7 (the paper's [36]).
    """

    def __init__(
        self,
        label_smoothing=0.1,
        pad_id=0,
        chunk_size=None,
        name="label_smoothed_cross_entropy",
        **kwargs,
    ):
        check_rate("label_smoothing", label_smoothing)
        check_positive_int("chunk_size", chunk_size, allow_none=True)
        kwargs.pop("reduction", None)
        super().__init__(name=name, reduction="sum", **kwargs)
        self.label_smoothing = label_smoothing
        self.pad_id = pad_id
        self.chunk_size = chunk_size

    def call(self, y_true, y_pred):
        y_true = ops.cast(y_true, "int32")
        vocab_size = ops.shape(y_pred)[-1]
        eps = self.label_smoothing
        # q'(k) = (1 - eps) * [k = y] + eps / V, [B, T, V]
        smoothed = ops.one_hot(y_true, vocab_size) * (1.0 - eps) + eps / vocab_size
        # -sum_k q'(k) log p(k): on TensorFlow one fused kernel
        # (`softmax_cross_entropy_with_logits`) that computes the loss and its
        # gradient in a single pass over the logits.
        per_token = ops.categorical_crossentropy(
            smoothed, ops.cast(y_pred, "float32"), from_logits=True
        )
        real = ops.cast(ops.not_equal(y_true, self.pad_id), "float32")
        return ops.sum(per_token * real) / ops.maximum(global_token_count(real), 1.0)

    def decoder_output_loss(self, y_true, decoder_output, kernel):
        """The loss of `decoder_output @ kernel`, fused and chunked.

        Args:
            y_true: int tensor `[B, T]`, the target ids.
            decoder_output: float tensor `[B, T, D]`.
            kernel: float tensor `[V, D]`, the pre-softmax projection in the
                embedding's layout (logits are `decoder_output @ kernel^T`).

        Returns:
            A tuple `(loss, statistics)`: the scalar loss, normalised like
            `call`, and the per-token statistics of
            `chunked_softmax_cross_entropy` (`"negative_log_prob"`, `"right"`,
            each `[B * T]`) for the metrics.
        """
        y_true = ops.cast(y_true, "int32")
        # [B, T, D] -> [B*T, D]; [B, T] -> [B*T]
        hidden = ops.cast(decoder_output, kernel.dtype)
        hidden = ops.reshape(hidden, (-1, ops.shape(hidden)[-1]))
        statistics = chunked_softmax_cross_entropy(
            hidden,
            kernel,
            ops.reshape(y_true, (-1,)),
            label_smoothing=self.label_smoothing,
            pad_id=self.pad_id,
            chunk_size=self.chunk_size,
        )
        real = ops.cast(ops.not_equal(y_true, self.pad_id), "float32")
        loss = statistics["loss_sum"] / ops.maximum(global_token_count(real), 1.0)
        return loss, statistics

    def get_config(self):
        config = super().get_config()
        config.pop("reduction", None)
        config.update(
            {
                "label_smoothing": self.label_smoothing,
                "pad_id": self.pad_id,
                "chunk_size": self.chunk_size,
            }
        )
        return config
