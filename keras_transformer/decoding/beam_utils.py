"""Tiling and reordering batch-first nests for beam search, and picking
entries per row (`take_per_row`, for every search).

A nest (any structure of tensors `keras.tree` understands: dicts, lists,
tuples) whose leaves are all batch first, `[B, ...]`, is expanded to one row
per beam, `[B*K, ...]`, with the K beams of a sentence next to each other. The
self-attention caches of `Transformer.init_cache` are such a nest.
"""

import keras
from keras import ops


def tile_beams(nest, beam_size):
    """Repeats every leaf of a batch-first nest once per beam.

    Args:
        nest: a nest of tensors `[B, ...]`.
        beam_size: int. K.

    Returns:
        The same nest with leaves `[B*K, ...]`; rows `b*K .. b*K + K - 1`
        are copies of row `b`.
    """
    # [B, ...] -> [B*K, ...]
    return keras.tree.map_structure(lambda x: ops.repeat(x, beam_size, axis=0), nest)


def gather_beams(nest, flat_indices):
    """Picks rows of every leaf of a `[B*K, ...]` nest.

    Args:
        nest: a nest of tensors `[B*K, ...]`.
        flat_indices: int tensor `[B*K]`, `b*K + parent beam` for each new row.

    Returns:
        The nest with leaves `[B*K, ...]`, row i taken from row
        `flat_indices[i]`.
    """
    return keras.tree.map_structure(lambda x: ops.take(x, flat_indices, axis=0), nest)


def take_per_row(x, indices):
    """`x[b, indices[b, m], ...]`: entries of each row along axis 1, as one
    gather along axis 0.

    What `ops.take_along_axis(x, indices, axis=1)` gives (with `indices`
    broadcast over `x`'s trailing axes), without the copies Keras'
    TensorFlow backend makes for it: that swaps axis 1 of `x` to the end,
    transposing the whole of `x` (a beam step's `[B, K, V]` logits, say) and
    the broadcast indices, to gather one element at a time and swap back.
    Here the rows of `x` flattened to `[B*N, ...]` are gathered whole.

    Args:
        x: tensor `[B, N, ...]`.
        indices: int tensor `[B, M]`, values in `[0, N)`.

    Returns:
        tensor `[B, M, ...]`, `x`'s dtype.
    """
    shape = ops.shape(x)
    batch_size, trailing = shape[0], tuple(shape[2:])
    # [B, M] -> [B*M], rows of x as [B*N, ...]
    rows = flat_beam_indices(indices, row_length=shape[1])
    taken = ops.take(ops.reshape(x, (-1, *trailing)), rows, axis=0)
    return ops.reshape(taken, (batch_size, ops.shape(indices)[1], *trailing))


def flat_beam_indices(beam_indices, row_length=None):
    """Turns per-sentence beam indices `[B, K]` into row indices `[B*K]`.

    Args:
        beam_indices: int tensor `[B, K]`, values in `[0, K_old)`.
        row_length: int or scalar int tensor, K_old: the rows each sentence
            has in the `[B*K_old, ...]` layout gathered from. Defaults to K
            (a beam search's reorder, the same beam size before and after).

    Returns:
        int tensor `[B*K]`: `b * K_old + beam_indices[b, k]`.
    """
    batch_size = ops.shape(beam_indices)[0]
    if row_length is None:
        row_length = ops.shape(beam_indices)[1]
    offsets = ops.arange(batch_size, dtype="int32") * row_length
    # [B, K] + [B, 1] -> [B, K] -> [B*K]
    return ops.reshape(
        ops.cast(beam_indices, "int32") + ops.expand_dims(offsets, 1), (-1,)
    )


def top_k_by_blocks(x, k, block_size=16):
    """`ops.top_k(x, k)` along the last axis, reading most of `x` only once.

    The row is cut into blocks of `block_size`; the k best elements lie in the
    k blocks with the best maxima (each of those k maxima is at least as good
    as any element outside them), so a full top-k runs only over those
    k * block_size candidates, which is faster on CPU for beam search's
    per-beam top-2K over the vocabulary (figures in docs/experiment-log.md,
    "Decoding speed and the search's design"). The result is exactly `ops.top_k`'s, ties
    included: the k blocks are gathered in their original order, so equal
    values still come lowest index first. Rows shorter than four times
    `k * block_size` use `ops.top_k` directly.

    Args:
        x: float tensor `[..., N]` (an N known only at run time takes
            `ops.top_k`).
        k: int. How many to keep.
        block_size: int. Elements per block. Defaults to `16`.

    Returns:
        A tuple `(values [..., k], indices [..., k] int32)`, best first.
    """
    size = x.shape[-1]
    if size is None or size < 4 * k * block_size:
        values, indices = ops.top_k(x, k)
        return values, ops.cast(indices, "int32")
    leading = ops.shape(x)[:-1]
    blocks = -(-size // block_size)
    if blocks * block_size != size:
        # Pad the last block with the lowest value, never picked before a real
        # element (k <= size).
        padding = [[0, 0]] * (len(x.shape) - 1) + [[0, blocks * block_size - size]]
        x = ops.pad(x, padding, constant_values=float("-inf"))
    # [..., N] -> [R, blocks, block_size], R the number of rows
    rows = ops.reshape(x, (-1, blocks, block_size))
    # [R, blocks] -> [R, k], the best blocks, back in their original order
    _, best_blocks = ops.top_k(ops.max(rows, axis=-1), k)
    best_blocks = ops.sort(ops.cast(best_blocks, "int32"), axis=-1)
    # [R, k, block_size] -> [R, k * block_size]
    candidates = ops.reshape(take_per_row(rows, best_blocks), (-1, k * block_size))
    values, picks = ops.top_k(candidates, k)
    picks = ops.cast(picks, "int32")
    # [R, k]: the picked candidate's block and its position in the row
    block = take_per_row(best_blocks, picks // block_size)
    indices = block * block_size + picks % block_size
    return (
        ops.reshape(values, (*leading, k)),
        ops.reshape(indices, (*leading, k)),
    )
