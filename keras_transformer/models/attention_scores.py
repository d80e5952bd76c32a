"""The attention weights of a teacher-forced pass, for pictures."""

from keras_transformer.layers.attention_masks import padding_mask
from keras_transformer.models.special_ids import PAD_ID


class AttentionScores:
    """`Transformer`'s `attention_scores` (its layers asked for their weights),
    apart from the model's own definition."""

    def attention_scores(self, source_ids, target_ids, training=False):
        """The attention weights of every layer for one teacher-forced pass.

        Runs the same layers, weights and masks as the functional model (source
        padding; causal and target padding in decoder self-attention), asking
        each block for its softmax(Q K^T / sqrt(d_k)) weights (§3.2.1). Masked
        positions are exactly zero. Used to draw pictures like the paper's
        Figures 3-5 (`keras_transformer.visualization`).

        Args:
            source_ids: int tensor `[B, S]`, 0 for padding.
            target_ids: int tensor `[B, T]`, the target shifted right.
            training: bool. Whether dropout is active. Defaults to `False`.

        Returns:
            A dict of lists with one tensor per layer, bottom layer first:
            `"encoder"` self-attention `[B, H, S, S]`, `"decoder"`
            self-attention `[B, H, T, T]` and `"cross"` (encoder-decoder)
            attention `[B, H, T, S]`.
        """
        encoder_output, source_mask, encoder_scores = self._encode(
            source_ids, training=training, return_attention_scores=True
        )
        _, _, decoder_scores = self._decode(
            target_ids,
            encoder_padding_mask=source_mask,
            encoder_output=encoder_output,
            target_padding_mask=padding_mask(target_ids, PAD_ID),
            training=training,
            return_attention_scores=True,
            **self._pointer(target_ids, source_ids, encoder_output),
        )
        return {"encoder": encoder_scores, **decoder_scores}
