import functools
import importlib
import itertools
import math

import keras
import numpy as np
import pytest
from keras import ops

from keras_transformer.decoding import beam_search, greedy_search
from keras_transformer.decoding.beam_search import NEG_INF
from tests.markers import tensorflow_only

# The module (the package's `beam_search` attribute is the function).
beam_search_module = importlib.import_module("keras_transformer.decoding.beam_search")
done_sentences = importlib.import_module("keras_transformer.decoding.done_sentences")

EOS = 3

# A bigram "model" over ids {0: start, 1: a, 2: b, 3: eos}: row = last token.
BIGRAM = np.array(
    [
        [0.001, 0.55, 0.149, 0.3],  # start: a .55, eos .3, b .149
        [0.001, 0.1, 0.299, 0.6],  # after a: eos .6, b .299, a .1
        [0.001, 0.899, 0.05, 0.05],  # after b: a .899
        [0.25, 0.25, 0.25, 0.25],  # after eos: never used
    ],
    "float32",
)


def _bigram_fn(ids, index, cache):
    log_probs = ops.convert_to_tensor(np.log(BIGRAM))
    # [B*K, 1] -> [B*K, V]
    return ops.take(log_probs, ids[:, 0], axis=0), cache


def _penalty(length, alpha):
    return ((5 + length) / 6) ** alpha


def _hashing_model(batch_size, vocab_size, seed=0, buckets=97, scale=2.0):
    """A step function whose logits depend on the whole prefix, through a hash
    kept in the cache, plus the same model in numpy for brute force."""
    table = (
        np.random.default_rng(seed).normal(size=(batch_size, buckets, vocab_size))
        * scale
    )
    table = table.astype("float32")

    def step_hash(h, token):
        return (h * 31 + token + 1) % buckets

    def fn(ids, index, cache):
        h = step_hash(cache["hash"], ids[:, 0])
        flat = ops.reshape(ops.convert_to_tensor(table), (-1, vocab_size))
        logits = ops.take(flat, cache["sentence"] * buckets + h, axis=0)
        return logits, {"hash": h, "sentence": cache["sentence"]}

    def initial_cache():
        return {
            "hash": ops.zeros((batch_size,), "int32"),
            "sentence": ops.arange(batch_size, dtype="int32"),
        }

    def log_probs(sentence, h):
        logits = table[sentence, h].astype("float64")
        return logits - np.log(np.sum(np.exp(logits)))

    return fn, initial_cache, step_hash, log_probs


def test_scripted_bigram_gives_the_hand_computed_beams_alpha_0():
    # K = 2. Step 1: the best two are "a" (.55) and "eos" (.3): "eos" finishes.
    # Step 2: "a eos" (.33) finishes, "a b" (.16445) and "b a" (.13395) live.
    # The finished set is full and its worst, log .3, beats log .16445: stop.
    ids, scores = beam_search(
        _bigram_fn, np.array([0]), (), beam_size=2, alpha=0.0, eos_id=EOS, max_length=3
    )
    np.testing.assert_array_equal(np.array(ids), [[[1, EOS, 0], [EOS, 0, 0]]])
    np.testing.assert_allclose(
        np.array(scores), [[math.log(0.33), math.log(0.3)]], rtol=1e-5
    )


def test_scripted_bigram_length_penalty_promotes_a_longer_beam():
    # alpha = 2: the alive bound log(.16445) / penalty(3) = -1.02 beats "eos"
    # (-1.20), so step 3 runs: "a b a" (.14784, the limit, no eos) and
    # "b a eos" (.08037) finish. Ranked: "a eos" -0.81, "a b a" -1.08,
    # "eos" -1.20, "b a eos" -1.42.
    ids, scores = beam_search(
        _bigram_fn, np.array([0]), (), beam_size=2, alpha=2.0, eos_id=EOS, max_length=3
    )
    np.testing.assert_array_equal(np.array(ids), [[[1, EOS, 0], [1, 2, 1]]])
    expected = [
        math.log(0.55 * 0.6) / _penalty(2, 2.0),
        math.log(0.55 * 0.299 * 0.899) / _penalty(3, 2.0),
    ]
    np.testing.assert_allclose(np.array(scores), [expected], rtol=1e-5)


def test_beam_reaching_the_maximum_length_is_finished_without_eos():
    ids, scores = beam_search(
        _bigram_fn, np.array([0]), (), beam_size=2, alpha=0.0, eos_id=EOS, max_length=1
    )
    # Length 1: "a" (.55) is finished by the limit, "eos" (.3) by eos.
    np.testing.assert_array_equal(np.array(ids), [[[1], [EOS]]])
    np.testing.assert_allclose(
        np.array(scores), [[math.log(0.55), math.log(0.3)]], rtol=1e-5
    )


def test_per_sentence_maximum_lengths():
    fn, initial_cache, _, _ = _hashing_model(3, 6, seed=1)
    max_lengths = np.array([1, 3, 5])
    ids, scores = beam_search(
        fn,
        np.zeros(3, "int32"),
        initial_cache(),
        beam_size=3,
        alpha=0.6,
        eos_id=EOS,
        max_length=5,
        max_lengths=max_lengths,
    )
    ids = np.array(ids)
    assert ids.shape == (3, 3, 5)
    for b, limit in enumerate(max_lengths):
        assert np.all(ids[b, :, limit:] == 0)
    assert np.all(np.isfinite(np.array(scores)))


@pytest.mark.parametrize("alpha", [0.0, 0.6, 2.0])
def test_wide_beam_returns_the_brute_force_n_best(alpha):
    # V = 4 (3 tokens + eos), at most 4 tokens: at most 27 live prefixes and,
    # before the last step, 36 extensions. A beam of 40 keeps them all, and at
    # the last step (one length, so score order = log-prob order) the 40 best:
    # it must return exactly the 40 best of the 121 sequences.
    vocab_size, beam_size, max_lengths = 4, 40, [4, 3]
    fn, initial_cache, step_hash, log_probs = _hashing_model(2, vocab_size, seed=2)
    ids, scores = beam_search(
        fn,
        np.zeros(2, "int32"),
        initial_cache(),
        beam_size=beam_size,
        alpha=alpha,
        eos_id=EOS,
        max_length=4,
        max_lengths=np.array(max_lengths),
    )
    ids, scores = np.array(ids), np.array(scores)

    for sentence, limit in enumerate(max_lengths):
        # Every sequence ending in eos, or of the maximum length without eos.
        candidates = []
        for length in range(1, limit + 1):
            for tokens in itertools.product(range(vocab_size), repeat=length):
                if EOS in tokens[:-1] or (tokens[-1] != EOS and length < limit):
                    continue
                h, total = step_hash(0, 0), 0.0
                for token in tokens:
                    total += log_probs(sentence, h)[token]
                    h = step_hash(h, token)
                candidates.append((total / _penalty(length, alpha), tokens))
        candidates.sort(key=lambda c: -c[0])
        best = candidates[:beam_size]
        np.testing.assert_allclose(
            scores[sentence], [s for s, _ in best], rtol=1e-4, atol=1e-5
        )
        for k, (_, tokens) in enumerate(best):
            np.testing.assert_array_equal(ids[sentence, k, : len(tokens)], tokens)
            assert np.all(ids[sentence, k, len(tokens) :] == 0)


def test_beam_size_1_with_alpha_0_equals_greedy():
    fn, initial_cache, _, _ = _hashing_model(4, 7, seed=3, scale=1.0)
    greedy_ids, greedy_log_probs = greedy_search(
        fn, np.zeros(4, "int32"), initial_cache(), EOS, 8, return_scores=True
    )
    beam_ids, beam_scores = beam_search(
        fn, np.zeros(4, "int32"), initial_cache(), 1, 0.0, EOS, 8
    )
    np.testing.assert_array_equal(np.array(beam_ids)[:, 0], np.array(greedy_ids))
    np.testing.assert_allclose(
        np.array(beam_scores)[:, 0], np.array(greedy_log_probs), rtol=1e-5
    )
    assert len(set(map(tuple, np.array(greedy_ids).tolist()))) > 1


def test_n_best_is_sorted_and_padded_after_eos():
    fn, initial_cache, _, _ = _hashing_model(2, 6, seed=4)
    ids, scores = beam_search(fn, np.zeros(2, "int32"), initial_cache(), 4, 0.6, EOS, 6)
    ids, scores = np.array(ids), np.array(scores)
    assert np.all(np.diff(scores, axis=1) <= 0)
    for hypothesis in ids.reshape(-1, 6):
        eos = np.flatnonzero(hypothesis == EOS)
        if eos.size:
            assert np.all(hypothesis[eos[0] + 1 :] == 0)


def test_fewer_hypotheses_than_beams_leaves_empty_slots():
    # Vocabulary {0, 1, 2, eos}, one token at most: only 4 hypotheses exist.
    fn, initial_cache, _, _ = _hashing_model(1, 4, seed=5)
    _, scores = beam_search(fn, np.zeros(1, "int32"), initial_cache(), 6, 0.6, EOS, 1)
    scores = np.array(scores)[0]
    assert np.all(np.isfinite(scores[:4])) and np.all(np.isneginf(scores[4:]))


@tensorflow_only("counts Python calls of the step function, which only eager TF makes")
@pytest.mark.parametrize("alpha, steps", [(0.0, 2), (0.6, 4)])
def test_terminates_early_when_no_live_beam_can_win(alpha, steps):
    # Every step: p(eos) = 0.9, p(2) = 0.1. After 2 steps the finished beams
    # are "eos" (log .9) and "2 eos" (log .09, score -2.19 with alpha 0.6);
    # the best alive beam after n steps has log prob n * log(.1). With
    # alpha = 0 it cannot win after step 2; with alpha = 0.6 its bound
    # n * log(.1) / penalty(50) = -0.609 n drops below -2.19 at n = 4.
    calls = []

    def fn(ids, index, cache):
        calls.append(int(index))
        logits = ops.log(ops.convert_to_tensor([[1e-6, 1e-6, 0.1, 0.9]]))
        return ops.tile(logits, (ops.shape(ids)[0], 1)), cache

    ids, _ = beam_search(fn, np.array([0]), (), 2, alpha, EOS, max_length=50)
    assert calls == list(range(steps))
    np.testing.assert_array_equal(np.array(ids)[0, :, :3], [[EOS, 0, 0], [2, EOS, 0]])


def _eos_then_sure_eos_fn(ids, index, cache):
    """First step: p(eos) = .6, p(4) = .4; later steps: p(eos) = .99, p(4) =
    .01 (ids 0 to 2 get 1e-9)."""
    first = ops.log(ops.convert_to_tensor([1e-9, 1e-9, 1e-9, 0.6, 0.4]))
    later = ops.log(ops.convert_to_tensor([1e-9, 1e-9, 1e-9, 0.99, 0.01]))
    logits = ops.where(ops.equal(index, 0), first, later)
    return ops.tile(ops.expand_dims(logits, 0), (ops.shape(ids)[0], 1)), cache


@pytest.mark.parametrize(
    "early_stopping, expected_ids, expected_score",
    [
        # One beam, scores log P / |y| (alpha 1, "average"), T = 3.
        # Step 1: "eos" finishes with log .6 = -0.511; "4" stays alive with
        # log .4 = -0.916. Its bound at the maximum length, -0.916 / 3 =
        # -0.305, beats -0.511, so the exact search goes on. Step 2: "4 eos"
        # finishes with log(.4 * .99) / 2 = -0.463, better; the alive "4 4"
        # (log .004 = -5.52) cannot beat it even at T (-1.84): done.
        ("exact", [4, EOS, 0], math.log(0.4 * 0.99) / 2),
        # After step 1 the heuristic divides by the current length: -0.916 / 1
        # <= -0.511, so it stops with the worse "eos"; one finished
        # hypothesis (K = 1) stops "k_finished" there too.
        ("heuristic", [EOS, 0, 0], math.log(0.6)),
        ("k_finished", [EOS, 0, 0], math.log(0.6)),
    ],
)
def test_hugging_face_stopping_rules_can_stop_before_the_best(
    early_stopping, expected_ids, expected_score
):
    def search():
        return beam_search(
            _eos_then_sure_eos_fn,
            ops.zeros((1,), "int32"),
            (),
            beam_size=1,
            alpha=1.0,
            eos_id=EOS,
            max_length=3,
            length_normalization="average",
            early_stopping=early_stopping,
        )

    for ids, scores in (search(), _compiled(search)()):
        np.testing.assert_array_equal(np.array(ids), [[expected_ids]])
        np.testing.assert_allclose(np.array(scores), [[expected_score]], rtol=1e-5)


def test_banned_ids_keep_their_share_of_the_softmax():
    # p(pad 0) = .5, p(eos) = .3, p(4) = .2; one step (T = 1), alpha 0.
    # Banned after the log-softmax: "eos" log .3 = -1.204 and "4" log .2 =
    # -1.609, the log-softmax of the unmasked logits; banned before it (pad
    # at NEG_INF), the rest renormalize: log .6 = -0.511 and log .4 = -0.916.
    probs = [0.5, 1e-9, 1e-9, 0.3, 0.2]

    def fn(ids, index, cache, banned_in_step=False):
        logits = ops.log(ops.convert_to_tensor([probs]))
        if banned_in_step:
            logits = ops.where(ops.equal(ops.arange(5), 0), NEG_INF, logits)
        return ops.tile(logits, (ops.shape(ids)[0], 1)), cache

    def search(fn, **options):
        return beam_search(
            fn, ops.full((1,), 2, "int32"), (), 2, 0.0, EOS, 1, pad_id=0, **options
        )

    ids, scores = search(fn, banned_ids=(0,))
    np.testing.assert_array_equal(np.array(ids), [[[EOS], [4]]])
    np.testing.assert_allclose(
        np.array(scores), [[math.log(0.3), math.log(0.2)]], rtol=1e-5
    )
    ids, scores = search(functools.partial(fn, banned_in_step=True))
    np.testing.assert_array_equal(np.array(ids), [[[EOS], [4]]])
    np.testing.assert_allclose(
        np.array(scores), [[math.log(0.6), math.log(0.4)]], rtol=1e-5
    )


def _compiled(fn):
    """The function compiled as a whole: XLA on TensorFlow, jax.jit on JAX."""
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        return tf.function(fn, jit_compile=True)
    import jax

    return jax.jit(fn)


def test_compiled_search_equals_plain():
    fn, initial_cache, _, _ = _hashing_model(3, 6, seed=6)
    max_lengths = np.array([2, 5, 7], "int32")

    def search(max_lengths):
        return beam_search(
            fn,
            ops.zeros((3,), "int32"),
            initial_cache(),
            beam_size=4,
            alpha=0.6,
            eos_id=EOS,
            max_length=7,
            max_lengths=max_lengths,
        )

    plain_ids, plain_scores = search(max_lengths)
    compiled_ids, compiled_scores = _compiled(search)(max_lengths)
    np.testing.assert_array_equal(np.array(compiled_ids), np.array(plain_ids))
    np.testing.assert_allclose(
        np.array(compiled_scores), np.array(plain_scores), rtol=1e-5
    )


@tensorflow_only("A run-time buffer size needs TensorFlow graph mode.")
def test_run_time_buffer_size_equals_the_static_one():
    # The exported translator's buffer: a scalar tensor, one trace for every
    # size. Same hypotheses and scores as the int buffer of the same size.
    import tensorflow as tf

    fn, initial_cache, _, _ = _hashing_model(3, 6, seed=1)

    def search(max_length):
        return beam_search(
            fn,
            ops.zeros((3,), "int32"),
            initial_cache(),
            beam_size=3,
            alpha=0.6,
            eos_id=EOS,
            max_length=max_length,
            max_lengths=np.array([2, 4, 7], "int32"),
        )

    traced = tf.function(search, input_signature=[tf.TensorSpec([], tf.int32)])
    for size in (4, 7, 9):
        ids, scores = traced(tf.constant(size))
        expected_ids, expected_scores = search(size)
        assert ids.shape == (3, 3, size)
        np.testing.assert_array_equal(np.array(ids), np.array(expected_ids))
        np.testing.assert_allclose(
            np.array(scores), np.array(expected_scores), rtol=1e-6
        )
    assert traced.experimental_get_tracing_count() == 1


@tensorflow_only("Dropping done sentences needs TensorFlow graph mode.")
@pytest.mark.parametrize("early_stopping", ["exact", "heuristic", "k_finished"])
@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_dropping_done_sentences_changes_nothing_and_steps_fewer_rows(
    early_stopping, alpha
):
    # 9 sentences whose limits and hashed models end them at different steps:
    # the same hypotheses and scores with `drop_done`, from fewer decoder rows.
    import tensorflow as tf

    batch_size, beam_size = 9, 3
    fn, initial_cache, _, _ = _hashing_model(batch_size, 6, seed=3)
    rows = tf.Variable(0)

    def counting_fn(ids, index, cache):
        rows.assign_add(tf.shape(ids)[0])
        return fn(ids, index, cache)

    def search(drop_done):
        return tf.function(
            lambda: beam_search(
                counting_fn,
                ops.zeros((batch_size,), "int32"),
                initial_cache(),
                beam_size=beam_size,
                alpha=alpha,
                eos_id=EOS,
                max_length=12,
                max_lengths=np.array([12, 2, 5, 12, 9, 1, 12, 7, 4], "int32"),
                early_stopping=early_stopping,
                drop_done=drop_done,
            )
        )()

    kept_ids, kept_scores = search(drop_done=False)
    kept_rows = int(rows.numpy())
    rows.assign(0)
    ids, scores = search(drop_done=True)
    np.testing.assert_array_equal(np.array(ids), np.array(kept_ids))
    # (the log-softmax over fewer rows may round differently in the last bit)
    np.testing.assert_allclose(np.array(scores), np.array(kept_scores), rtol=1e-6)
    assert ids.shape == (batch_size, beam_size, 12)
    # Every step of the loop ran all 9 * 3 rows before.
    assert kept_rows % (batch_size * beam_size) == 0
    assert int(rows.numpy()) < 0.75 * kept_rows


def test_dropping_done_sentences_is_refused_where_shapes_are_fixed():
    def search():
        return beam_search(
            _bigram_fn,
            ops.zeros((2,), "int32"),
            (),
            beam_size=2,
            alpha=0.6,
            eos_id=EOS,
            max_length=3,
            drop_done=True,
        )

    with pytest.raises(ValueError, match="drop_done=True on the"):
        _compiled(search)()
    with pytest.raises(ValueError, match="drop_done=True on the"):
        _compiled(
            lambda: greedy_search(
                _bigram_fn, ops.zeros((2,), "int32"), (), EOS, 3, drop_done=True
            )
        )()


def test_kept_size_is_the_next_power_of_two():
    sizes = [1, 2, 3, 4, 5, 8, 9, 255, 256, 257]
    kept = [int(done_sentences.kept_size(ops.convert_to_tensor(n))) for n in sizes]
    assert kept == [1, 2, 4, 4, 8, 8, 16, 256, 256, 512]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"beam_size": 0}, "beam_size=0"),
        ({"alpha": -0.5}, "alpha=-0.5"),
        ({"max_length": 0}, "max_length=0"),
        ({"max_length": 2.5}, "max_length=2.5"),
        ({"max_length": True}, "max_length=True"),
        ({"max_length": np.array([3, 4], "int32")}, r"max_length=\[3 4\]"),
        ({"early_stopping": "never"}, "early_stopping='never'"),
    ],
)
def test_rejects_invalid_arguments(kwargs, match):
    arguments = dict(beam_size=2, alpha=0.6, eos_id=EOS, max_length=3)
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=match):
        beam_search(_bigram_fn, np.array([0]), (), **arguments)


def test_large_vocabulary_block_top_k_equals_a_plain_top_k(monkeypatch):
    # V = 640 >= 4 * 2K * 16: each beam's best 2K come from `top_k_by_blocks`'
    # block path; the search must equal one using a plain top-k there.
    fn, initial_cache, _, _ = _hashing_model(3, 640, seed=4)

    def search():
        return beam_search(
            fn,
            np.array([1, 1, 1]),
            initial_cache(),
            beam_size=4,
            alpha=0.6,
            eos_id=EOS,
            max_length=6,
        )

    ids, scores = search()

    def plain_top_k(x, k, block_size=16):
        values, indices = ops.top_k(x, k)
        return values, ops.cast(indices, "int32")

    monkeypatch.setattr(beam_search_module, "top_k_by_blocks", plain_top_k)
    expected_ids, expected_scores = search()
    np.testing.assert_array_equal(np.array(ids), np.array(expected_ids))
    np.testing.assert_array_equal(np.array(scores), np.array(expected_scores))
