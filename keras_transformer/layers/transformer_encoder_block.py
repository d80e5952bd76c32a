"""One encoder layer of the Transformer (paper §3.1)."""

import keras
from keras import ops

from keras_transformer.layers.attention_masks import merge_attention_masks
from keras_transformer.layers.transformer_block_base import (
    TransformerBlockBase,
    split_attention_outputs,
)


@keras.saving.register_keras_serializable(package="keras_transformer")
class TransformerEncoderBlock(TransformerBlockBase):
    """Self-attention and feed-forward sub-layers with residuals (paper §3.1).

    "Each layer has two sub-layers. The first is a multi-head self-attention
    mechanism, and the second is a simple, position-wise fully connected
    feed-forward network." Each is wrapped as LayerNorm(x + Dropout(Sublayer(x)))
    (§3.1, residual dropout of §5.4), or pre-norm with `normalize_first=True`.

    Args:
        num_heads: int. Number of attention heads h.
        intermediate_dim: int. Inner size d_ff of the feed-forward network.
        key_dim: int. d_k. Defaults to `d_model // num_heads`.
        value_dim: int. d_v. Defaults to `d_model // num_heads`.
        dropout: float. P_drop, on every sub-layer output. Defaults to `0.0`.
        attention_dropout: float. Dropout on attention weights (not in the
            paper). Defaults to `0.0`.
        activation_dropout: float. Dropout inside the feed-forward network (not
            in the paper). Defaults to `0.0`.
        activation: str or callable. Defaults to `"relu"` (§3.3).
        normalize_first: bool. Pre-norm instead of the paper's post-norm.
            Defaults to `False`.
        layer_norm_epsilon: float. Defaults to `1e-6` (tensor2tensor).
        kernel_initializer: initializer. Defaults to `"glorot_uniform"`.
        bias_initializer: initializer. Defaults to `"zeros"`.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: tensor `[B, S, D]`.
        padding_mask: optional bool tensor `[B, S]`, `True` on real tokens.
        attention_mask: optional bool tensor `[B, S, S]`, combined with the
            padding mask.
        training: bool. Whether dropout is active.
        return_attention_scores: bool. Also return the self-attention weights
            `[B, H, S, S]`.
        attention_bias: optional float tensor `[B, H, S, S]` added to the
            self-attention scores (`CachedMultiHeadAttention`).

    Returns:
        A tensor `[B, S, D]`, and the attention weights if asked for.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §3.1 and §5.4.
        - [He et al., 2016. Deep Residual Learning for Image Recognition](
          https://arxiv.org/abs/1512.03385) (the residual connections).
        - [Ba et al., 2016. Layer Normalization](https://arxiv.org/abs/1607.06450).
        - [Xiong et al., 2020. On Layer Normalization in the Transformer Architecture](
          https://arxiv.org/abs/2002.04745) (pre-norm, `normalize_first=True`).

    Examples:
        >>> block = TransformerEncoderBlock(num_heads=2, intermediate_dim=16)
        >>> block(keras.ops.ones((2, 3, 8))).shape
        (2, 3, 8)
    """

    def build(self, inputs_shape):
        self._build_attention("self_attention", inputs_shape, inputs_shape)
        self._build_feed_forward(inputs_shape)
        self.built = True

    def call(
        self,
        inputs,
        padding_mask=None,
        attention_mask=None,
        training=None,
        return_attention_scores=False,
        attention_bias=None,
    ):
        mask = merge_attention_masks(ops.shape(inputs)[1], padding_mask, attention_mask)

        def self_attention(x):
            outputs = self.self_attention(
                x,
                x,
                attention_mask=mask,
                training=training,
                return_attention_scores=return_attention_scores,
                attention_bias=attention_bias,
            )
            return split_attention_outputs(outputs, return_attention_scores, False)

        x, (scores, _) = self._residual(
            "self_attention", inputs, self_attention, training
        )
        x = self._feed_forward_residual(x, training)
        return (x, scores) if return_attention_scores else x
