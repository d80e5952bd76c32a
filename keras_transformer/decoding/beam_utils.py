"""Tiling and reordering batch-first nests for beam search.

A nest (any structure of tensors `keras.tree` understands: dicts, lists,
tuples) whose leaves are all batch first, `[B, ...]`, is expanded to one row
per beam, `[B*K, ...]`, with the K beams of a sentence next to each other. The
decoding cache of `Transformer.init_cache` is such a nest.
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


def flat_beam_indices(beam_indices):
    """Turns per-sentence beam indices `[B, K]` into row indices `[B*K]`.

    Args:
        beam_indices: int tensor `[B, K]`, values in `[0, K_old)`.
        Callers pass indices into a `[B, K_old]` layout with the same
        `K_old` as the rows of the nest they gather (the search's beam size).

    Returns:
        int tensor `[B*K]`: `b * K_old + beam_indices[b, k]`.
    """
    batch_size, beam_size = ops.shape(beam_indices)[0], ops.shape(beam_indices)[1]
    offsets = ops.arange(batch_size, dtype="int32") * beam_size
    # [B, K] + [B, 1] -> [B, K] -> [B*K]
    return ops.reshape(
        ops.cast(beam_indices, "int32") + ops.expand_dims(offsets, 1), (-1,)
    )
