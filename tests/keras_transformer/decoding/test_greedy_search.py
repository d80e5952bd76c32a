import numpy as np
from keras import ops

from keras_transformer.decoding import greedy_search
from keras_transformer.decoding.greedy_search import first_max_index
from tests.markers import tensorflow_only

EOS = 3


def _scripted(table):
    """symbols_to_logits_fn whose argmax at step t is table[:, t]."""
    table = ops.convert_to_tensor(np.asarray(table, "int32"))
    vocab = int(np.max(np.asarray(table))) + 1

    def fn(ids, index, cache):
        logits = 5.0 * ops.one_hot(ops.take(table, index, axis=1), vocab)
        return ops.expand_dims(logits, 1), cache + 1

    return fn


def test_follows_the_argmax_and_pads_after_eos():
    table = [[5, 6, EOS, 7, 7], [4, 4, 4, 4, 4]]
    ids = greedy_search(
        _scripted(table), np.array([2, 2]), np.int32(0), eos_id=EOS, max_length=5
    )
    np.testing.assert_array_equal(np.array(ids), [[5, 6, EOS, 0, 0], [4, 4, 4, 4, 4]])


def test_feeds_back_its_own_previous_token():
    # The next token is the fed token + 1, so the output shows what was fed.
    def fn(ids, index, cache):
        return 5.0 * ops.one_hot(ids + 1, 12), cache

    ids = greedy_search(fn, np.array([4, 7]), (), eos_id=EOS, max_length=3)
    np.testing.assert_array_equal(np.array(ids), [[5, 6, 7], [8, 9, 10]])


@tensorflow_only("counts Python calls of the step function, which only eager TF makes")
def test_stops_as_soon_as_every_sentence_has_finished():
    calls = []

    def fn(ids, index, cache):
        calls.append(int(index))
        token = EOS if int(index) == 1 else 5
        return 5.0 * ops.one_hot(ops.full((2,), token, "int32"), 6), cache

    ids = greedy_search(fn, np.array([2, 2]), (), eos_id=EOS, max_length=10)
    assert calls == [0, 1]
    np.testing.assert_array_equal(np.array(ids)[:, :3], [[5, EOS, 0], [5, EOS, 0]])


def test_per_sentence_maximum_lengths_and_scores():
    # p(5) = .5, p(eos) = .3 ... at every step: never eos, so limits decide.
    def fn(ids, index, cache):
        probs = ops.convert_to_tensor([[0.05, 0.05, 0.05, 0.3, 0.05, 0.5]])
        return ops.tile(ops.log(probs), (ops.shape(ids)[0], 1)), cache

    ids, log_probs = greedy_search(
        fn,
        np.array([2, 2, 2]),
        (),
        eos_id=EOS,
        max_length=4,
        max_lengths=np.array([1, 3, 4]),
        return_scores=True,
    )
    np.testing.assert_array_equal(
        np.array(ids), [[5, 0, 0, 0], [5, 5, 5, 0], [5, 5, 5, 5]]
    )
    np.testing.assert_allclose(
        np.array(log_probs), np.log(0.5) * np.array([1, 3, 4]), rtol=1e-5
    )


def test_first_max_index_equals_argmax_with_ties():
    rng = np.random.default_rng(1)
    logits = rng.integers(0, 5, (50, 30)).astype("float32")  # ties in every row
    got = ops.convert_to_numpy(first_max_index(ops.convert_to_tensor(logits)))
    np.testing.assert_array_equal(got, np.argmax(logits, axis=-1))
    assert got.dtype == np.int32
