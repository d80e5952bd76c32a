import numpy as np
import pytest
from keras import ops

from keras_transformer.decoding import greedy_search, sampling_search

EOS = 3
PROBS = np.array([0.01, 0.01, 0.01, 0.07, 0.5, 0.3, 0.1], "float32")


def _fn(ids, index, cache):
    return ops.tile(
        ops.log(ops.convert_to_tensor(PROBS[None])), (ops.shape(ids)[0], 1)
    ), cache


def test_top_1_and_low_temperature_equal_greedy():
    start = np.full((4,), 2)
    greedy = np.array(greedy_search(_fn, start, (), EOS, 6))
    top_1, _ = sampling_search(_fn, start, (), EOS, 6, top_k=1, seed=0)
    cold, _ = sampling_search(_fn, start, (), EOS, 6, temperature=1e-3, seed=0)
    np.testing.assert_array_equal(np.array(top_1), greedy)
    np.testing.assert_array_equal(np.array(cold), greedy)


def test_samples_follow_the_distribution_and_top_k():
    start = np.full((2000,), 2)
    ids, log_probs = sampling_search(_fn, start, (), EOS, 1, seed=1)
    counts = np.bincount(np.array(ids)[:, 0], minlength=len(PROBS)) / 2000
    np.testing.assert_allclose(counts, PROBS, atol=0.03)
    np.testing.assert_allclose(
        np.array(log_probs), np.log(PROBS[np.array(ids)[:, 0]]), rtol=1e-5
    )
    ids, _ = sampling_search(_fn, start, (), EOS, 1, top_k=2, seed=1)
    assert set(np.unique(np.array(ids))) == {4, 5}


def test_same_seed_same_samples_and_padding_after_eos():
    start = np.full((16,), 2)
    first, _ = sampling_search(_fn, start, (), EOS, 8, temperature=2.0, seed=5)
    second, _ = sampling_search(_fn, start, (), EOS, 8, temperature=2.0, seed=5)
    np.testing.assert_array_equal(np.array(first), np.array(second))
    for row in np.array(first):
        eos = np.flatnonzero(row == EOS)
        if eos.size:
            assert np.all(row[eos[0] + 1 :] == 0)


@pytest.mark.parametrize(
    "kwargs, match",
    [({"temperature": 0.0}, "temperature=0.0"), ({"top_k": -1}, "top_k=-1")],
)
def test_rejects_invalid_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sampling_search(_fn, np.array([2]), (), EOS, 3, **kwargs)
