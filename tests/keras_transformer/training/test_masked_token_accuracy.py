import numpy as np
import pytest

from keras_transformer.training import MaskedTokenAccuracy


def test_counts_real_tokens_only_across_batches():
    metric = MaskedTokenAccuracy()
    logits = np.eye(5, dtype="float32")[[[1, 2, 3], [4, 4, 0]]]  # argmax ids
    metric.update_state(np.array([[1, 2, 4], [4, 0, 0]]), logits)  # 3 of 4 right
    metric.update_state(np.array([[3, 0, 0]]), logits[:1])  # 0 of 1 right
    assert float(metric.result()) == pytest.approx(3 / 5)
    metric.reset_state()
    assert float(metric.result()) == 0.0


def test_config():
    assert MaskedTokenAccuracy(pad_id=7).get_config()["pad_id"] == 7


def test_agrees_with_argmax_on_random_logits():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(4, 6, 50)).astype("float32")
    labels = np.where(rng.random((4, 6)) < 0.5, logits.argmax(-1), 7)
    labels[0, 0] = 0  # padding
    metric = MaskedTokenAccuracy()
    metric.update_state(labels, logits)
    real = labels != 0
    expected = ((logits.argmax(-1) == labels) & real).sum() / real.sum()
    assert float(metric.result()) == pytest.approx(expected)
