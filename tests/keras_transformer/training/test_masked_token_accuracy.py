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
