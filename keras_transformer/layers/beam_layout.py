"""Head-first and beam-folded layouts of attention tensors (paper §3.2).

`CachedMultiHeadAttention` keeps its caches heads first, `[B, H, S, d]`,
and attends from the K beams of a sentence over that sentence's single
cache row by folding the beams into query positions (`fold_beams`,
`unfold_beams`); a beam-shared self-attention cache holds the K beams'
keys and values position-major (`interleave_beams`). Notation: B sentences,
K beams, H heads, T query and S key positions, d the depth of a head.
"""

from keras import ops

from keras_transformer.layers.layer_utils import static_or_dynamic_dims


def heads_first(x):
    """`[B, T, H, d]` -> `[B, H, T, d]`."""
    return ops.transpose(x, (0, 2, 1, 3))


def fold_beams(query, attention_mask, beams, tile_mask=True):
    """`[B*K, H, T, d]` -> `[B, H, K*T, d]`; the mask `[B, T, S]` -> `[B, K*T, S]`.

    The K beams of a sentence become K * T query positions over the
    sentence's single cache row: the same scores as attending from K tiled
    copies of the cache, reading it once. With `tile_mask=False` the mask is
    `[B, K*T, S]` already (one row per beam and position) and kept.
    """
    heads, length, depth = static_or_dynamic_dims(query, (1, 2, 3))
    # [B*K, H, T, d] -> [B, K, H, T, d] -> [B, H, K, T, d] -> [B, H, K*T, d]
    query = ops.reshape(query, (-1, beams, heads, length, depth))
    query = ops.reshape(
        ops.transpose(query, (0, 2, 1, 3, 4)), (-1, heads, beams * length, depth)
    )
    if attention_mask is not None and tile_mask:
        attention_mask = ops.tile(attention_mask, (1, beams, 1))
    return query, attention_mask


def unfold_beams(x, beams):
    """`[B, H, K*T, n]` -> `[B*K, H, T, n]`, the inverse of `fold_beams`."""
    heads, folded, last = static_or_dynamic_dims(x, (1, 2, 3))
    length = folded // beams
    # [B, H, K*T, n] -> [B, H, K, T, n] -> [B, K, H, T, n] -> [B*K, H, T, n]
    x = ops.reshape(x, (-1, heads, beams, length, last))
    return ops.reshape(ops.transpose(x, (0, 2, 1, 3, 4)), (-1, heads, length, last))


def interleave_beams(x, beams):
    """`[B*K, H, T, d]` -> `[B, H, T*K, d]`, position-major: row t*K + k is
    position t of beam k (the slots of a beam-shared self-attention cache)."""
    heads, length, depth = static_or_dynamic_dims(x, (1, 2, 3))
    # [B*K, H, T, d] -> [B, K, H, T, d] -> [B, H, T, K, d] -> [B, H, T*K, d]
    x = ops.reshape(x, (-1, beams, heads, length, depth))
    return ops.reshape(
        ops.transpose(x, (0, 2, 3, 1, 4)), (-1, heads, length * beams, depth)
    )
