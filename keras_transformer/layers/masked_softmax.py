"""Masked softmax of attention scores, keeping one tensor for backward (§3.2.1)."""

import keras
from keras import ops, tree


def masked_softmax(scores, mask):
    """Softmax over the last axis where `mask` is True, 0 where it is False.

    The same numbers as `keras.layers.Softmax` with a mask (what
    `keras.layers.MultiHeadAttention` uses): masked scores are replaced by a
    large negative number before the softmax and the probabilities are set to
    0 after it, so that a row with nothing to attend to is all zeros. Only
    the backward pass differs. Automatic differentiation keeps two tensors of
    the scores' size `[B, H, T, S]`: the softmax output (for the softmax's
    gradient) and the masked probabilities (for the `probs x V` matmul). This
    op keeps only the masked probabilities `p` and computes the gradient
    from them:

        d_scores = p * (g - sum(g * p)),  over the last axis,

    which equals autodiff's result: where a row has an unmasked position the
    softmax output is exactly 0 at its masked positions (`exp(-1e9)`
    underflows), so it equals `p`; in a fully masked row `p` is 0 and so is
    autodiff's gradient (the mask zeroes the upstream gradient). One
    `[B, H, T, S]` tensor less per attention in training, 18 in `base`
    (BUILD_NOTES.md, "Training").

    Args:
        scores: float tensor `[..., S]`.
        mask: bool tensor broadcastable to `scores`, True where a query may
            attend.

    Returns:
        The probabilities, in the scores' shape and dtype.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §3.2.3 (masking by setting scores to -inf).
    """
    # keras.layers.Softmax's fill value: -1e9 overflows float16.
    float16 = keras.backend.standardize_dtype(scores.dtype) == "float16"
    large_negative = -3e4 if float16 else -1e9
    if keras.backend.standardize_dtype(mask.dtype) != "bool":
        mask = ops.greater(mask, ops.cast(0.5, mask.dtype))

    @ops.custom_gradient
    def apply(x, keep):
        probs = ops.softmax(
            ops.where(keep, x, ops.cast(large_negative, x.dtype)), axis=-1
        )
        probs = ops.where(keep, probs, ops.cast(0.0, probs.dtype))

        def grad(*upstream):
            # TensorFlow passes one upstream gradient per output, JAX a tuple.
            upstream = tree.flatten(upstream)[0]
            return (
                probs * (upstream - ops.sum(upstream * probs, axis=-1, keepdims=True)),
                None,
            )

        return probs, grad

    return apply(scores, mask)
