"""Attention masks of the Transformer (paper §3.1, §3.2.3).

Notation used in shape comments throughout the package: B batch, S source
length, T target length, D d_model, H heads, K beams, V vocabulary.

A mask is boolean, `True` where attention is allowed. Padding id is 0.
"""

from keras import ops

from keras_transformer.layers.layer_utils import static_or_dynamic_dims


def padding_mask(token_ids, pad_id=0):
    """Returns `token_ids != pad_id` as a boolean mask.

    Args:
        token_ids: int tensor of shape `[B, S]`.
        pad_id: int. The padding id. Defaults to `0`.

    Returns:
        A bool tensor of shape `[B, S]`, `True` on real tokens.
    """
    return ops.not_equal(token_ids, pad_id)


def key_padding_attention_mask(key_mask, query_length):
    """Broadcasts a `[B, S]` key padding mask to an attention mask.

    Args:
        key_mask: bool tensor of shape `[B, S]`, `True` on real tokens.
        query_length: int or scalar tensor. The number of query positions T.

    Returns:
        A bool tensor of shape `[B, T, S]`.
    """
    key_mask = ops.cast(key_mask, "bool")
    batch_size, key_length = static_or_dynamic_dims(key_mask, (0, 1))
    # [B, S] -> [B, 1, S] -> [B, T, S]
    return ops.broadcast_to(
        ops.expand_dims(key_mask, 1), (batch_size, query_length, key_length)
    )


def causal_attention_mask(query_length, key_length, query_offset=0):
    """The decoder's causal mask (paper §3.2.3: "prevent leftward information flow").

    Query `i` sits at absolute position `query_offset + i` and may attend to key
    positions `<= query_offset + i`. With a key/value cache of `key_length`
    slots, `query_offset` is the position of the first new token, so the mask
    also hides the cache slots that are not filled yet.

    Args:
        query_length: int or scalar tensor T.
        key_length: int or scalar tensor, the number of key positions.
        query_offset: int or scalar tensor. Absolute position of query 0.
            Defaults to `0`.

    Returns:
        A bool tensor of shape `[T, key_length]`.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §3.2.3.
    """
    query_positions = ops.arange(query_length) + ops.cast(query_offset, "int32")
    key_positions = ops.arange(key_length)
    # [T, 1] >= [1, S] -> [T, S]
    return ops.greater_equal(
        ops.expand_dims(query_positions, 1), ops.expand_dims(key_positions, 0)
    )


def merge_attention_masks(query_length, key_mask=None, attention_mask=None):
    """Combines a key padding mask with an attention mask (both optional).

    Args:
        query_length: int or scalar tensor T.
        key_mask: optional bool tensor `[B, S]`, `True` on real keys.
        attention_mask: optional bool tensor `[B, T, S]` or `[T, S]`.

    Returns:
        A bool tensor `[B, T, S]`, or `None` when both masks are `None`.
    """
    mask = None if attention_mask is None else ops.cast(attention_mask, "bool")
    if key_mask is not None:
        padding = key_padding_attention_mask(key_mask, query_length)
        mask = padding if mask is None else ops.logical_and(mask, padding)
    return mask
