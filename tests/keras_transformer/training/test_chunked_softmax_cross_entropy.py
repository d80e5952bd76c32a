import numpy as np
import pytest
import tensorflow as tf

from keras_transformer.training.chunked_softmax_cross_entropy import (
    chunked_softmax_cross_entropy,
)

N, D, V = 37, 8, 50


def _data():
    rng = np.random.default_rng(0)
    hidden = tf.constant(rng.normal(size=(N, D)), tf.float32)
    # [V, D], the embedding's layout
    kernel = tf.constant(rng.normal(size=(V, D)), tf.float32)
    labels = rng.integers(1, V, size=N)
    labels[[0, 7, 36]] = 0
    return hidden, kernel, tf.constant(labels, tf.int32)


def _reference(hidden, kernel, labels, eps):
    """Dense logits, log-softmax and smoothed targets, by hand in numpy terms."""
    logits = tf.matmul(hidden, kernel, transpose_b=True)
    log_probs = tf.nn.log_softmax(logits)
    targets = tf.one_hot(labels, V) * (1.0 - eps) + eps / V
    real = tf.cast(labels != 0, tf.float32)
    per_token = -tf.reduce_sum(targets * log_probs, -1)
    nll = -tf.gather(log_probs, labels, batch_dims=1)
    right = tf.cast(tf.argmax(logits, -1, output_type=tf.int32) == labels, tf.float32)
    return tf.reduce_sum(per_token * real), nll * real, right * real


@pytest.mark.parametrize("chunk_size", [1, 16, 37, 64])
@pytest.mark.parametrize("mode", ["eager", "graph", "xla"])
def test_loss_gradients_and_statistics_equal_the_dense_computation(chunk_size, mode):
    hidden, kernel, labels = _data()

    def fused(hidden, kernel):
        with tf.GradientTape() as tape:
            tape.watch([hidden, kernel])
            out = chunked_softmax_cross_entropy(
                hidden, kernel, labels, label_smoothing=0.1, chunk_size=chunk_size
            )
            # A non-unit upstream gradient, as the 1 / token-count scaling gives.
            scaled = 0.25 * out["loss_sum"]
        return out, tape.gradient(scaled, [hidden, kernel])

    if mode != "eager":
        fused = tf.function(fused, jit_compile=mode == "xla")
    out, (hidden_grad, kernel_grad) = fused(hidden, kernel)
    with tf.GradientTape() as tape:
        tape.watch([hidden, kernel])
        loss_sum, nll, right = _reference(hidden, kernel, labels, 0.1)
        scaled = 0.25 * loss_sum
    want_hidden_grad, want_kernel_grad = tape.gradient(scaled, [hidden, kernel])
    np.testing.assert_allclose(out["loss_sum"], loss_sum, rtol=1e-5)
    np.testing.assert_allclose(out["negative_log_prob"], nll, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out["right"], right)
    np.testing.assert_allclose(hidden_grad, want_hidden_grad, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(kernel_grad, want_kernel_grad, rtol=1e-4, atol=1e-6)
    # Padding rows: no loss, no statistics, no gradient.
    assert float(out["negative_log_prob"][7]) == 0.0
    np.testing.assert_array_equal(hidden_grad.numpy()[[0, 7, 36]], 0.0)


def test_a_hand_computed_token():
    # One token, V = 2, logits (0, log 3): p = (1/4, 3/4), label 1, eps 0.2:
    # q' = (0.1, 0.9); loss = -(0.1 log 1/4 + 0.9 log 3/4); d/d logits = p - q'.
    hidden = tf.constant([[1.0]])
    kernel = tf.constant([[0.0], [np.log(3.0)]], tf.float32)  # [V, D]
    with tf.GradientTape() as tape:
        tape.watch(kernel)
        out = chunked_softmax_cross_entropy(
            hidden, kernel, tf.constant([1]), label_smoothing=0.2, chunk_size=4
        )
    want = -(0.1 * np.log(0.25) + 0.9 * np.log(0.75))
    np.testing.assert_allclose(out["loss_sum"], want, rtol=1e-6)
    np.testing.assert_allclose(out["negative_log_prob"], [-np.log(0.75)], rtol=1e-6)
    np.testing.assert_array_equal(out["right"], [1.0])
    np.testing.assert_allclose(
        tape.gradient(out["loss_sum"], kernel), [[0.25 - 0.1], [0.75 - 0.9]], atol=1e-6
    )
