"""Training the Transformer without its `[B, T, V]` logits (the chunked loss)."""

from keras import ops


class ChunkedLossTraining:
    """`Transformer`'s training hooks for a loss fused with the output projection.

    At `base` training size the pre-softmax projection (§3.4) and the
    label-smoothed loss (§5.4) hold `[4096, 32000]` float32 logits, their
    softmax and their gradient: 1.6 GB. When the compiled loss can fuse the
    projection with the loss (it has a `chunk_size` and a
    `decoder_output_loss(y_true, decoder_output, kernel)` method, as
    `LabelSmoothedCrossEntropy(chunk_size=n)` from `compile_transformer`
    does), a training call (as `fit` makes it) stops before the projection
    and returns `{"decoder_output": [B, T, D]}`; `compute_loss` hands it with
    the projection's kernel to the loss, which works through the tokens in
    row chunks, and updates the compiled metrics from the per-token
    statistics the loss returns (they have no logits to read in
    `compute_metrics`). Every other call (`model(...)`, `evaluate`,
    `predict`, decoding) returns logits, and so does a training call under
    any other loss, and so does every call of a model whose projection has
    a bias (`output_bias`, imported models): the fused loss computes plain
    `x E^T`.

    The metrics are reached through Keras' `_compile_metrics` (the
    `CompileMetrics` of `compile(metrics=...)`), and each must have an
    `update_from_token_statistics(y_true, statistics)` method, as
    `MaskedTokenAccuracy`, `Perplexity` and `TargetTokens` do; another metric
    is refused by name. Sample weights are refused too.

    A mixin of `Transformer`: it uses its `_decoder_output` and
    `target_embedding`.
    """

    def _chunked_output_loss(self):
        """The compiled loss if it asks for the decoder output, else `None`."""
        loss = getattr(self, "loss", None)
        if self.target_embedding.output_bias:
            return None
        if getattr(loss, "chunk_size", None) and hasattr(loss, "decoder_output_loss"):
            return loss
        return None

    def call(self, inputs, training=None, mask=None):
        """Logits; while training with a chunked loss, `{"decoder_output"}`."""
        if training and self._chunked_output_loss() is not None:
            return {"decoder_output": self._decoder_output(inputs, training=training)}
        return super().call(inputs, training=training, mask=mask)

    def compute_loss(
        self, x=None, y=None, y_pred=None, sample_weight=None, training=True
    ):
        """Keras' loss, or the chunked loss of the decoder output (see `call`).

        The chunked loss also yields each token's -log p(y) and whether its
        argmax is right, which update the compiled metrics here (they have no
        logits to read in `compute_metrics`).
        """
        if not isinstance(y_pred, dict):
            return super().compute_loss(
                x, y, y_pred, sample_weight=sample_weight, training=training
            )
        if sample_weight is not None:
            raise ValueError(
                "The chunked output loss weighs tokens by the padding mask and "
                "takes no sample weights. Compile with `loss_chunk_size=None` to "
                f"use them. Received: sample_weight={sample_weight}"
            )
        loss, statistics = self._chunked_output_loss().decoder_output_loss(
            y, y_pred["decoder_output"], self.target_embedding.output_kernel()
        )
        metrics = self._compile_metrics
        if metrics is not None:
            if not metrics.built:
                metrics.build(y, y_pred["decoder_output"])
            for metric in metrics.metrics:
                if not hasattr(metric, "update_from_token_statistics"):
                    raise ValueError(
                        "With the chunked output loss, metrics read per-token "
                        "statistics instead of logits; this one cannot. Compile "
                        "with `loss_chunk_size=None` to use it. Received: "
                        f"metric={metric}"
                    )
                metric.update_from_token_statistics(y, statistics)
        for extra_loss in self.losses:
            loss = loss + ops.cast(extra_loss, loss.dtype)
        return loss

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        if isinstance(y_pred, dict):
            # Updated in `compute_loss` from the chunked loss's statistics.
            return self.get_metrics_result()
        return super().compute_metrics(x, y, y_pred, sample_weight=sample_weight)
