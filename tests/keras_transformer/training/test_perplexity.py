import math

import numpy as np
import pytest

from keras_transformer.training import Perplexity


def test_uniform_predictions_give_the_vocabulary_size():
    metric = Perplexity()
    metric.update_state(np.array([[1, 2, 0]]), np.zeros((1, 3, 10), "float32"))
    assert float(metric.result()) == pytest.approx(10.0, rel=1e-5)


def test_exp_of_mean_token_nll():
    logits = np.log(np.array([[[0.1, 0.6, 0.3], [0.1, 0.2, 0.7]]], "float32"))
    metric = Perplexity()
    metric.update_state(np.array([[1, 2]]), logits)
    assert float(metric.result()) == pytest.approx(
        math.exp(-(math.log(0.6) + math.log(0.7)) / 2), rel=1e-5
    )
