import keras
import numpy as np
import pytest

from keras_transformer.training import LabelSmoothedCrossEntropy


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


LOGITS = np.array(
    [[[2.0, 0.5, -1.0, 0.0], [0.1, 0.2, 0.3, 0.4], [1.0, 1.0, 1.0, 1.0]]],
    "float32",
)
LABELS = np.array([[1, 3, 0]])  # the last position is padding


def test_hand_computed_value():
    eps = 0.1
    log_p = _log_softmax(LOGITS.astype("float64"))[0]
    # q'(k) = (1 - eps) [k = y] + eps / V, over the two real positions only.
    per_token = [
        -(1 - eps) * log_p[t, y] - eps * log_p[t].mean() for t, y in [(0, 1), (1, 3)]
    ]
    loss = LabelSmoothedCrossEntropy(label_smoothing=eps)(LABELS, LOGITS)
    assert float(loss) == pytest.approx(np.mean(per_token), rel=1e-5)


def test_without_smoothing_equals_sparse_cross_entropy_over_real_tokens():
    ours = LabelSmoothedCrossEntropy(label_smoothing=0.0)(LABELS, LOGITS)
    keras_loss = keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, ignore_class=0
    )(LABELS, LOGITS)
    assert float(ours) == pytest.approx(float(keras_loss), rel=1e-5)


def test_normalised_by_tokens_not_sentences():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 5, 7)).astype("float32")
    labels = np.array([[1, 2, 3, 4, 5], [6, 0, 0, 0, 0]])
    loss = LabelSmoothedCrossEntropy()
    both = float(loss(labels, logits))
    first = float(loss(labels[:1], logits[:1]))
    second = float(loss(labels[1:], logits[1:]))
    assert both == pytest.approx((5 * first + 1 * second) / 6, rel=1e-5)


def test_all_padding_gives_zero_not_nan():
    loss = LabelSmoothedCrossEntropy()(np.zeros((1, 3)), LOGITS)
    assert float(loss) == 0.0


def test_config_round_trip_and_bad_value():
    loss = LabelSmoothedCrossEntropy(label_smoothing=0.2, pad_id=5)
    revived = keras.losses.deserialize(keras.losses.serialize(loss))
    assert (revived.label_smoothing, revived.pad_id) == (0.2, 5)
    with pytest.raises(ValueError, match="label_smoothing=1.5"):
        LabelSmoothedCrossEntropy(label_smoothing=1.5)


def test_gradient_is_softmax_minus_smoothed_targets_over_real_tokens():
    import tensorflow as tf

    eps, vocab = 0.1, LOGITS.shape[-1]
    logits = tf.constant(LOGITS)
    with tf.GradientTape() as tape:
        tape.watch(logits)
        loss = LabelSmoothedCrossEntropy(label_smoothing=eps)(LABELS, logits)
    gradient = tape.gradient(loss, logits).numpy()[0]
    probs = np.exp(_log_softmax(LOGITS.astype("float64")))[0]
    targets = (1 - eps) * np.eye(vocab)[LABELS[0]] + eps / vocab
    expected = (probs - targets) / 2  # two real tokens
    expected[2] = 0.0  # padding
    np.testing.assert_allclose(gradient, expected, atol=1e-6)
