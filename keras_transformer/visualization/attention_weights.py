"""The attention probabilities of every layer of a `Transformer`, as numpy."""

import numpy as np
from keras import ops

# Which attention of the Transformer (paper §3.2.3), and the axes of its weights:
# "encoder" self-attention [B, H, S, S], "decoder" (masked) self-attention
# [B, H, T, T], "cross" encoder-decoder attention [B, H, T, S].
ATTENTION_KINDS = ("encoder", "decoder", "cross")


def attention_weights(model, source_ids, target_ids):
    """Returns the attention weights of every layer for a batch of sentence pairs.

    One teacher-forced pass in inference mode (no dropout) through
    `model.attention_scores`, i.e. the model's own blocks, weights and masks:
    source padding is masked in encoder self-attention and cross-attention,
    target padding and future positions in decoder self-attention (§3.2.3).
    Each row is a softmax(Q K^T / sqrt(d_k)) distribution (§3.2.1) over the
    keys, and masked keys get exactly zero.

    Args:
        model: a `keras_transformer.Transformer`.
        source_ids: int array `[B, S]`, 0 for padding.
        target_ids: int array `[B, T]`, the decoder input (the target shifted
            right, starting with bos), 0 for padding.

    Returns:
        A dict with one list per kind in `ATTENTION_KINDS`, one float32 numpy
        array per layer, bottom layer first: `"encoder"` `[B, H, S, S]`,
        `"decoder"` `[B, H, T, T]`, `"cross"` `[B, H, T, S]`.

    Examples:
        >>> from keras_transformer import Transformer
        >>> model = Transformer(source_vocab_size=20, num_layers=2, hidden_dim=8,
        ...                     intermediate_dim=16, num_heads=2)
        >>> weights = attention_weights(model, [[5, 6, 7]], [[1, 5]])
        >>> weights["cross"][-1].shape
        (1, 2, 2, 3)
    """
    if not callable(getattr(model, "attention_scores", None)):
        raise ValueError(
            "attention_weights expected a keras_transformer.Transformer. "
            f"Received: model={type(model).__name__}"
        )
    source_ids = _token_ids("source_ids", source_ids)
    target_ids = _token_ids("target_ids", target_ids)
    if source_ids.shape[0] != target_ids.shape[0]:
        raise ValueError(
            "source_ids and target_ids must hold the same number of sentences. "
            f"Received: source_ids.shape={source_ids.shape}, "
            f"target_ids.shape={target_ids.shape}"
        )
    scores = model.attention_scores(source_ids, target_ids, training=False)
    return {
        kind: [
            np.asarray(ops.convert_to_numpy(ops.cast(layer, "float32")))
            for layer in scores[kind]
        ]
        for kind in ATTENTION_KINDS
    }


def _token_ids(name, ids):
    """`ids` as an int32 `[B, L]` array, or a `ValueError` naming its shape."""
    ids = np.asarray(ids)
    if ids.ndim != 2 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(
            f"`{name}` expected a non-empty int array [batch, length]. "
            f"Received: {name}.shape={ids.shape}, {name}.dtype={ids.dtype}"
        )
    return ids.astype("int32")
