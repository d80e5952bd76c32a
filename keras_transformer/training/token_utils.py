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


def target_log_probs(y_true, logits):
    """Log-probabilities of the labels and of the whole vocabulary, in float32.

    Args:
        y_true: int tensor `[B, T]`.
        logits: float tensor `[B, T, V]`.

    Returns:
        A tuple `(label_log_probs [B, T], log_probs [B, T, V])`.
    """
    log_probs = ops.log_softmax(ops.cast(logits, "float32"), axis=-1)
    # [B, T, V] -> [B, T]
    label_log_probs = ops.squeeze(
        ops.take_along_axis(
            log_probs, ops.expand_dims(ops.cast(y_true, "int32"), -1), axis=-1
        ),
        -1,
    )
    return label_log_probs, log_probs
