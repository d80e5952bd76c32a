"""Token-level helpers of the losses and metrics: label log-probabilities and the
number of real target tokens in the global batch, across replicas."""

import keras
from keras import ops


def global_token_count(mask):
    """Sums `mask` over the local batch and, under tf.distribute, over replicas.

    Inside a replica context of a strategy with more than one replica (the
    TensorFlow backend's `model.fit` under `MirroredStrategy`,
    `MultiWorkerMirroredStrategy` or `TPUStrategy`), the local count is
    all-reduced so every replica divides by the same global number. Elsewhere
    (one device, or the JAX backend, whose data-parallel `fit` computes the
    loss on the global batch) the local sum is already global.

    Args:
        mask: float tensor, 1.0 on real tokens.

    Returns:
        A float32 scalar.
    """
    count = ops.sum(ops.cast(mask, "float32"))
    if keras.backend.backend() != "tensorflow":
        return count
    import tensorflow as tf

    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return count
    return context.all_reduce(tf.distribute.ReduceOp.SUM, count)


def label_logits(y_true, logits):
    """The logit of each label, in float32.

    Args:
        y_true: int tensor `[B, T]`.
        logits: float tensor `[B, T, V]`.

    Returns:
        A float32 tensor `[B, T]`.
    """
    # [B, T, V] -> [B, T]
    return ops.squeeze(
        ops.take_along_axis(
            ops.cast(logits, "float32"),
            ops.expand_dims(ops.cast(y_true, "int32"), -1),
            axis=-1,
        ),
        -1,
    )


def label_negative_log_probs(y_true, logits):
    """-log p(y) per position, as logsumexp(logits) - logit(y), in float32.

    One exponential pass over the vocabulary and a gather; no `[B, T, V]`
    log-probabilities are materialised (metrics call this outside the
    gradient tape).

    Args:
        y_true: int tensor `[B, T]`.
        logits: float tensor `[B, T, V]`.

    Returns:
        A float32 tensor `[B, T]`.
    """
    log_normalizer = ops.logsumexp(ops.cast(logits, "float32"), axis=-1)
    return log_normalizer - label_logits(y_true, logits)
