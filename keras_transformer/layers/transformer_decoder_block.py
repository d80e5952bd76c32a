"""One decoder layer of the Transformer (paper §3.1), with a cache for decoding."""

import keras
from keras import ops

from keras_transformer.layers.attention_masks import (
    causal_attention_mask,
    merge_attention_masks,
)
from keras_transformer.layers.layer_utils import static_or_dynamic_dims
from keras_transformer.layers.transformer_block_base import (
    TransformerBlockBase,
    split_attention_outputs,
)


@keras.saving.register_keras_serializable(package="keras_transformer")
class TransformerDecoderBlock(TransformerBlockBase):
    """Causal self-attention, cross-attention and feed-forward (paper §3.1).

    The three sub-layers of a decoder layer, each wrapped like the encoder's
    (post-norm `LayerNorm(x + Dropout(Sublayer(x)))` by default, pre-norm with
    `normalize_first=True`):

    1. masked multi-head self-attention: position i attends to positions <= i
       only (§3.2.3), and not to target padding;
    2. multi-head attention over the encoder output ("encoder-decoder
       attention", §3.2.3), masked by the source padding mask;
    3. the position-wise feed-forward network (§3.3).

    For incremental decoding, pass `self_attention_cache` (keys `[B, H, T_max,
    d_k]` and values `[B, H, T_max, d_v]` of the positions decoded so far, heads
    first) with `self_attention_cache_update_index`, the position of the first
    new token; the causal mask then also hides the cache slots not written yet.
    Cross-attention keys and values can be projected once
    (`cross_attention.compute_cache`) and passed as `cross_attention_cache`
    instead of `encoder_sequence`. For beam search (paper §6.1), `num_beams=K`
    says that `decoder_sequence` has K rows per sentence while the
    cross-attention cache and `encoder_padding_mask` keep one row per sentence;
    with `share_beam_cache=True` the self-attention cache also keeps one row
    per sentence, with K slots per position, read through
    `self_attention_mask` (see `CachedMultiHeadAttention`).

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
        decoder_sequence: tensor `[B, T, D]`.
        encoder_sequence: tensor `[B, S, D]`; may be omitted when
            `cross_attention_cache` is given.
        decoder_padding_mask: optional bool tensor `[B, T]` (`[B, T_max]` with
            a cache), `True` on real target tokens.
        encoder_padding_mask: optional bool tensor `[B, S]`, `True` on real
            source tokens.
        self_attention_cache: optional tuple `(key_cache, value_cache)`.
        self_attention_cache_update_index: int or scalar int tensor, required
            with `self_attention_cache`.
        cross_attention_cache: optional tuple `(key_cache, value_cache)` of the
            projected encoder output.
        self_attention_mask: optional bool tensor, with `self_attention_cache`:
            the self-attention mask to use instead of the causal one, e.g. the
            `[B, K * T, S * K]` mask of a beam-shared cache (see
            `CachedMultiHeadAttention`).
        num_beams: optional int K, with `cross_attention_cache`: the rows of
            `decoder_sequence` per cross-attention cache row (beam search).
            `None` or 1: one row each.
        share_beam_cache: bool, with `num_beams`: the self-attention cache
            also has one row per sentence, slot `p * K + k` holding position
            p of beam row k; needs `self_attention_mask`. Defaults to `False`
            (one self-attention cache row per beam row).
        training: bool. Whether dropout is active.
        return_attention_scores: bool. Also return the self-attention weights
            `[B, H, T, T]` and the cross-attention weights `[B, H, T, S]`.
        cross_attention_bias: optional float tensor added to the
            cross-attention scores (`CachedMultiHeadAttention`'s
            `attention_bias`: `[B, H, T, S]`, or `[B, H, K * T, S]` with
            `num_beams`).

    Returns:
        The output `[B, T, D]`; then, if asked for, the self- and
        cross-attention weights; then, with `self_attention_cache`, the updated
        cache.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §3.1, §3.2.3 and §5.4.
        - [He et al., 2016. Deep Residual Learning for Image Recognition](
          https://arxiv.org/abs/1512.03385) (the residual connections).
        - [Ba et al., 2016. Layer Normalization](https://arxiv.org/abs/1607.06450).
        - [Xiong et al., 2020. On Layer Normalization in the Transformer Architecture](
          https://arxiv.org/abs/2002.04745) (pre-norm, `normalize_first=True`).

    Examples:
        >>> block = TransformerDecoderBlock(num_heads=2, intermediate_dim=16)
        >>> target, source = keras.ops.ones((2, 3, 8)), keras.ops.ones((2, 5, 8))
        >>> block(target, source).shape
        (2, 3, 8)
    """

    def build(self, decoder_sequence_shape, encoder_sequence_shape=None):
        if encoder_sequence_shape is None:
            encoder_sequence_shape = decoder_sequence_shape
        self._build_attention(
            "self_attention", decoder_sequence_shape, decoder_sequence_shape
        )
        self._build_attention(
            "cross_attention", decoder_sequence_shape, encoder_sequence_shape
        )
        self._build_feed_forward(decoder_sequence_shape)
        self.built = True

    def call(
        self,
        decoder_sequence,
        encoder_sequence=None,
        decoder_padding_mask=None,
        encoder_padding_mask=None,
        self_attention_cache=None,
        self_attention_cache_update_index=None,
        cross_attention_cache=None,
        self_attention_mask=None,
        num_beams=None,
        share_beam_cache=False,
        training=None,
        return_attention_scores=False,
        cross_attention_bias=None,
    ):
        if encoder_sequence is None and cross_attention_cache is None:
            raise ValueError(
                "TransformerDecoderBlock needs `encoder_sequence` or "
                "`cross_attention_cache`. Received neither."
            )
        if (self_attention_cache is None) != (
            self_attention_cache_update_index is None
        ):
            raise ValueError(
                "`self_attention_cache` and `self_attention_cache_update_index` "
                "go together. Received: self_attention_cache_update_index="
                f"{self_attention_cache_update_index}"
            )
        if num_beams is not None and cross_attention_cache is None:
            raise ValueError(
                "`num_beams` needs a `cross_attention_cache` (one row per "
                f"sentence). Received: num_beams={num_beams}"
            )
        if share_beam_cache and (num_beams is None or self_attention_mask is None):
            raise ValueError(
                "`share_beam_cache` needs `num_beams` and a `self_attention_mask` "
                f"over the shared slots. Received: num_beams={num_beams}, "
                f"self_attention_mask={self_attention_mask is not None}"
            )
        (query_length,) = static_or_dynamic_dims(decoder_sequence, (1,))
        if self_attention_mask is not None:
            if self_attention_cache is None or decoder_padding_mask is not None:
                raise ValueError(
                    "`self_attention_mask` replaces the causal mask of a cached "
                    "step: it needs `self_attention_cache` and no "
                    "`decoder_padding_mask`. Received: self_attention_cache="
                    f"{self_attention_cache is not None}, decoder_padding_mask="
                    f"{decoder_padding_mask is not None}"
                )
            self_mask = self_attention_mask
        else:
            if self_attention_cache is None:
                causal = causal_attention_mask(query_length, query_length)
            else:
                causal = causal_attention_mask(
                    query_length,
                    static_or_dynamic_dims(self_attention_cache[0], (2,))[0],
                    query_offset=self_attention_cache_update_index,
                )
            # [T, T_keys] -> [B, T, T_keys], then AND the target padding mask.
            (batch_size,) = static_or_dynamic_dims(decoder_sequence, (0,))
            causal = ops.broadcast_to(
                ops.expand_dims(causal, 0),
                (batch_size, *static_or_dynamic_dims(causal, (0, 1))),
            )
            self_mask = merge_attention_masks(
                query_length, decoder_padding_mask, causal
            )
        cross_mask = merge_attention_masks(query_length, encoder_padding_mask)

        def self_attention(x):
            outputs = self.self_attention(
                x,
                x,
                attention_mask=self_mask,
                cache=self_attention_cache,
                cache_update_index=self_attention_cache_update_index,
                num_beams=num_beams if share_beam_cache else None,
                training=training,
                return_attention_scores=return_attention_scores,
            )
            return split_attention_outputs(
                outputs, return_attention_scores, self_attention_cache is not None
            )

        def cross_attention(x):
            outputs = self.cross_attention(
                x,
                encoder_sequence if cross_attention_cache is None else x,
                attention_mask=cross_mask,
                cache=cross_attention_cache,
                num_beams=num_beams,
                training=training,
                return_attention_scores=return_attention_scores,
                attention_bias=cross_attention_bias,
            )
            return split_attention_outputs(
                outputs, return_attention_scores, cross_attention_cache is not None
            )

        x, (self_scores, new_cache) = self._residual(
            "self_attention", decoder_sequence, self_attention, training
        )
        x, (cross_scores, _) = self._residual(
            "cross_attention", x, cross_attention, training
        )
        x = self._feed_forward_residual(x, training)

        outputs = (x,)
        if return_attention_scores:
            outputs += (self_scores, cross_scores)
        if self_attention_cache is not None:
            outputs += (new_cache,)
        return outputs[0] if len(outputs) == 1 else outputs
