import numpy as np

from keras_transformer.training.token_utils import (
    global_token_count,
    label_logits,
    label_negative_log_probs,
)


def test_global_token_count_without_a_strategy_is_the_local_sum():
    assert float(global_token_count(np.array([[1.0, 1.0, 0.0], [1.0, 0, 0]]))) == 3.0


def test_label_logits_pick_the_labels():
    logits = np.array([[[0.5, -1.0, 2.0], [3.0, 0.25, 1.0]]], "float32")
    np.testing.assert_array_equal(
        np.array(label_logits(np.array([[2, 1]]), logits)), [[2.0, 0.25]]
    )


def test_label_negative_log_probs_equal_minus_log_softmax_of_the_label():
    logits = np.log(np.array([[[0.25, 0.75], [0.5, 0.5]]], "float32")) + 3.0
    nll = label_negative_log_probs(np.array([[1, 0]]), logits)
    np.testing.assert_allclose(np.array(nll), -np.log([[0.75, 0.5]]), rtol=1e-6)
