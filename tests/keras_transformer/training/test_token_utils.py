import numpy as np

from keras_transformer.training.token_utils import global_token_count, target_log_probs


def test_global_token_count_without_a_strategy_is_the_local_sum():
    assert float(global_token_count(np.array([[1.0, 1.0, 0.0], [1.0, 0, 0]]))) == 3.0


def test_target_log_probs_pick_the_labels():
    logits = np.log(np.array([[[0.25, 0.75], [0.5, 0.5]]], "float32"))
    label_log_probs, log_probs = target_log_probs(np.array([[1, 0]]), logits)
    np.testing.assert_allclose(np.array(label_log_probs), np.log([[0.75, 0.5]]), 1e-6)
    assert tuple(log_probs.shape) == (1, 2, 2)
