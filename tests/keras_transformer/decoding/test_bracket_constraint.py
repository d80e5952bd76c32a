import dataclasses
import importlib

import numpy as np
import pytest
from keras import ops

from keras_transformer.decoding import DecodingConfig, compiled_translate, translate
from keras_transformer.decoding.bracket_constraint import (
    BracketConstraint,
    one_beam_as_greedy,
    tree_length_limit,
)
from keras_transformer.decoding.greedy_search import greedy_search
from tests.keras_transformer.decoding.conftest import EOS_ID, VOCAB_SIZE
from tests.markers import tensorflow_only

# Over the tiny models' 10 ids: 4 is the leaf (`XX`), 5 and 6 open, 7 and 8
# close; 0-3 are pad/unk/bos/eos and 9 is a symbol of no class.
WORD, OPENS, CLOSES = [4], [5, 6], [7, 8]


def _constraint():
    return BracketConstraint(VOCAB_SIZE, WORD, OPENS, CLOSES, eos_id=EOS_ID)


def _is_well_formed(sequence, words):
    """Exactly `words` leaves, no close with nothing open, everything closed
    before eos, nothing after it but padding, and no other symbol."""
    depth, leaves, ended = 0, 0, False
    for token in sequence:
        if ended:
            if token != 0:
                return False
        elif token == EOS_ID:
            ended = True
            if depth or leaves != words:
                return False
        elif token in WORD:
            leaves += 1
        elif token in OPENS:
            depth += 1
        elif token in CLOSES:
            depth -= 1
            if depth < 0:
                return False
        else:
            return False
    return ended


# Matching brackets: 5 closes with 7 and 6 with 8.
MATCHING = [7, 8]


def _matched_constraint():
    return BracketConstraint(
        VOCAB_SIZE, WORD, OPENS, CLOSES, eos_id=EOS_ID, matching_close_ids=MATCHING
    )


def _is_matched(sequence, words):
    """`_is_well_formed`, every close its bracket's and no empty bracket."""
    stack = []
    if not _is_well_formed(sequence, words):
        return False
    for token in sequence:
        if token in OPENS:
            stack.append([MATCHING[OPENS.index(token)], 0])
        elif token in WORD:
            for entry in stack:
                entry[1] += 1
        elif token in CLOSES:
            close, leaves = stack.pop()
            if token != close or not leaves:
                return False
    return True


def _sources(batch_size=4, width=5, seed=3):
    rng = np.random.default_rng(seed)
    return rng.integers(4, VOCAB_SIZE, (batch_size, width)).astype("int32")


@pytest.mark.parametrize("matched", [False, True], ids=["counters", "matched"])
@pytest.mark.parametrize(
    "config",
    [
        DecodingConfig(beam_size=3, alpha=0.6, max_extra_length=20),
        DecodingConfig(
            beam_size=3, alpha=0.6, max_extra_length=20, share_beam_cache=False
        ),
        DecodingConfig(method="greedy", max_extra_length=20),
        DecodingConfig(method="sample", max_extra_length=20),
    ],
    ids=["beam-shared", "beam-per-row", "greedy", "sample"],
)
def test_every_hypothesis_is_a_well_formed_tree(tiny_model, config, matched):
    # The random model alone puts eos anywhere and emits id 9 and unk.
    # Matched, every close is also its bracket's and no bracket is empty.
    counts = np.array([1, 2, 3, 4], "int32")
    ids, scores = translate(
        tiny_model,
        _sources(),
        config,
        max_length=32,
        seed=0,
        constraint=_matched_constraint() if matched else _constraint(),
        word_counts=counts,
    )
    check = _is_matched if matched else _is_well_formed
    ids = np.asarray(ids)
    for sentence, words in enumerate(counts):
        for hypothesis in ids[sentence]:
            assert check(hypothesis.tolist(), words), hypothesis
    assert np.all(np.isfinite(np.asarray(scores)))


def test_unconstrained_model_output_is_not_well_formed(tiny_model):
    # The check above can fail: without the constraint it does.
    ids, _ = translate(
        tiny_model,
        _sources(),
        DecodingConfig(method="greedy", max_extra_length=20),
        max_length=32,
    )
    ids = np.asarray(ids)[:, 0]
    assert not all(
        _is_well_formed(ids[sentence].tolist(), words)
        for sentence, words in enumerate([1, 2, 3, 4])
    )


def test_shared_and_per_row_beam_caches_agree_under_the_constraint(tiny_model):
    counts = np.array([2, 1, 3, 2], "int32")
    results = [
        translate(
            tiny_model,
            _sources(),
            DecodingConfig(beam_size=4, max_extra_length=20, share_beam_cache=shared),
            max_length=32,
            constraint=_constraint(),
            word_counts=counts,
        )
        for shared in (True, False)
    ]
    np.testing.assert_array_equal(np.asarray(results[0][0]), np.asarray(results[1][0]))
    np.testing.assert_allclose(
        np.asarray(results[0][1]), np.asarray(results[1][1]), atol=1e-5
    )


@pytest.mark.parametrize(
    "matched, jit_compile",
    [(False, False), (True, False), (True, True)],
    ids=["counters", "matched", "matched-xla"],
)
def test_compiled_constrained_translate_equals_eager(tiny_model, matched, jit_compile):
    config = DecodingConfig(beam_size=2, max_extra_length=12)
    counts = np.array([3, 1, 2, 2], "int32")
    make = _matched_constraint if matched else _constraint
    eager = translate(
        tiny_model,
        _sources(),
        config,
        max_length=20,
        constraint=make(),
        word_counts=counts,
    )
    fn = compiled_translate(
        tiny_model, config, jit_compile=jit_compile, max_length=20, constraint=make()
    )
    compiled = fn(_sources(), counts)
    np.testing.assert_array_equal(np.asarray(eager[0]), np.asarray(compiled[0]))
    np.testing.assert_allclose(np.asarray(eager[1]), np.asarray(compiled[1]), atol=1e-5)


def test_the_constraint_renormalises_over_the_allowed_symbols():
    # Step probabilities that prefer eos (0.5) and id 9 (0.3) throughout,
    # an open at step 0 and the leaf at step 1; 0.01 for the rest.
    probs = np.full((6, VOCAB_SIZE), 0.01, "float32")
    probs[:, EOS_ID], probs[:, 9] = 0.5, 0.3
    probs[0, 5], probs[0, 4] = 0.08, 0.05
    probs[1, 4], probs[1, 5] = 0.08, 0.05

    def fn(ids, index, cache):
        logits = ops.log(ops.take(ops.convert_to_tensor(probs), index, axis=0))
        return ops.tile(ops.expand_dims(logits, 0), (ops.shape(ids)[0], 1)), cache

    constraint = _constraint()
    state = {
        "search": ops.zeros((1,)),
        "constraint": constraint.initial_state([1], [6]),
    }
    ids, log_probs = greedy_search(
        constraint.wrap(fn),
        ops.convert_to_tensor([2], "int32"),
        state,
        eos_id=EOS_ID,
        max_length=6,
        return_scores=True,
    )
    # One word. Step 0: leaf or open, {4, 5, 6}: the open, 0.08 / 0.14.
    # Step 1: {4, 5, 6, 7, 8}: the leaf, 0.08 / 0.16. Step 2: no word left,
    # one bracket open: a close, {7, 8}, the first of the tie, 0.5. Step 3:
    # only eos, probability 1.
    assert np.asarray(ids)[0].tolist() == [5, 4, 7, EOS_ID, 0, 0]
    expected = np.log(0.08 / 0.14) + np.log(0.08 / 0.16) + np.log(0.5)
    assert float(np.asarray(log_probs)[0]) == pytest.approx(expected, abs=1e-5)


def test_allowed_tokens_follow_the_counters():
    constraint = _constraint()
    state = {
        "words": ops.convert_to_tensor([2, 0, 0, 1, 2, 2], "int32"),
        "depth": ops.convert_to_tensor([0, 2, 0, 1, 1, 1], "int32"),
        "limit": ops.convert_to_tensor([20, 20, 20, 20, 9, 8], "int32"),
    }
    # index 3: rows 4 and 5 may write 6 and 5 more tokens
    allowed = np.asarray(constraint.allowed(state, 3))
    ids = lambda row: np.flatnonzero(allowed[row]).tolist()  # noqa: E731
    assert ids(0) == [4, 5, 6]  # words left, nothing open
    assert ids(1) == [7, 8]  # no words left, brackets open: close
    assert ids(2) == [EOS_ID]  # done
    assert ids(3) == [4, 5, 6, 7, 8]
    # Room for an open, its close, 2 words, the open close and eos: 6.
    assert ids(4) == [4, 5, 6, 7, 8]
    assert ids(5) == [4, 7, 8]  # 5 left: no open
    after = constraint.advance(
        state, ops.convert_to_tensor([4, 7, 2, 5, 4, 7], "int32")
    )
    assert np.asarray(after["words"]).tolist() == [1, 0, 0, 1, 1, 2]
    assert np.asarray(after["depth"]).tolist() == [0, 1, 0, 2, 1, 0]


@pytest.mark.parametrize("extra", [0, 1, 3])
def test_the_search_ends_within_a_tight_limit(tiny_model, extra):
    # Limits of source length + 0..3 tokens: the leaves, closes and eos fit
    # because opens stop where they would not.
    counts = np.array([5, 4, 3, 2], "int32")
    ids, scores = translate(
        tiny_model,
        _sources(),
        DecodingConfig(beam_size=3, max_extra_length=extra + 1),
        max_length=32,
        constraint=_constraint(),
        word_counts=counts,
    )
    scores = np.asarray(scores)
    # With 5 words and room for 6 tokens there is one tree only: the other
    # beam slots stay empty (score -inf), as beam search documents.
    assert np.all(np.isfinite(scores[:, 0]))
    for sentence, words in enumerate(counts):
        for hypothesis, score in zip(
            np.asarray(ids)[sentence], scores[sentence], strict=True
        ):
            if np.isfinite(score):
                assert _is_well_formed(hypothesis.tolist(), words), hypothesis
                assert list(hypothesis).index(EOS_ID) < 5 + extra + 1


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(word_ids=[]), "word_ids"),
        (dict(open_ids=[10]), "open_ids"),
        (dict(close_ids=[4]), "one class"),
        (dict(eos_id=5), "eos_id"),
    ],
)
def test_bad_symbol_classes_are_refused(kwargs, match):
    arguments = dict(word_ids=WORD, open_ids=OPENS, close_ids=CLOSES, eos_id=EOS_ID)
    arguments.update(kwargs)
    with pytest.raises(ValueError, match=match):
        BracketConstraint(VOCAB_SIZE, **arguments)


def test_constrain_brackets_needs_a_constraint(tiny_model):
    with pytest.raises(ValueError, match="BracketConstraint"):
        translate(tiny_model, _sources(), DecodingConfig(constrain_brackets=True))
    with pytest.raises(ValueError, match="word_counts"):
        translate(tiny_model, _sources(), DecodingConfig(), constraint=_constraint())


def test_the_unmatched_constraint_leaves_labels_free(tiny_model):
    # The check above can fail: the counters alone let closes mismatch.
    counts = np.array([1, 2, 3, 4], "int32")
    ids, _ = translate(
        tiny_model,
        _sources(batch_size=4, seed=5),
        DecodingConfig(method="sample", max_extra_length=20),
        max_length=32,
        seed=1,
        constraint=_constraint(),
        word_counts=counts,
    )
    ids = np.asarray(ids)[:, 0]
    assert not all(
        _is_matched(ids[sentence].tolist(), words)
        for sentence, words in enumerate(counts)
    )


def test_allowed_closes_follow_the_stack():
    constraint = _matched_constraint()
    state = constraint.initial_state([2, 1], [20, 20], buffer_length=8)
    # Row 0: (5 (6 XX -> only 8, then only 7 once a word is inside 5's
    # bracket (it is). Row 1: (6 -> no close before a word.
    for ids in ([5, 6], [6, 4], [4, 4]):
        state = constraint.advance(state, ops.convert_to_tensor(ids, "int32"))
        if ids == [6, 4]:
            # row 1: (6 XX, its bracket now holds a word
            allowed = np.asarray(constraint.allowed(state, 2))
            assert np.flatnonzero(allowed[1]).tolist() == [8]
    allowed = np.asarray(constraint.allowed(state, 3))
    assert np.flatnonzero(allowed[0]).tolist() == [4, 5, 6, 8]
    state = constraint.advance(state, ops.convert_to_tensor([8, 8], "int32"))
    allowed = np.asarray(constraint.allowed(state, 4))
    assert np.flatnonzero(allowed[0]).tolist() == [4, 5, 6, 7]
    assert np.flatnonzero(allowed[1]).tolist() == [EOS_ID]
    fresh = constraint.initial_state([1], [20], buffer_length=8)
    opened = constraint.advance(fresh, ops.convert_to_tensor([5], "int32"))
    # An empty bracket cannot close: only a word, or another bracket.
    assert np.flatnonzero(np.asarray(constraint.allowed(opened, 1))[0]).tolist() == [
        4,
        5,
        6,
    ]


@pytest.mark.parametrize(
    "matching, match",
    [([7], "one close id"), ([7, 4], "one close id"), ([7, 10], "one close id")],
)
def test_bad_matching_close_ids_are_refused(matching, match):
    with pytest.raises(ValueError, match=match):
        BracketConstraint(
            VOCAB_SIZE, WORD, OPENS, CLOSES, eos_id=EOS_ID, matching_close_ids=matching
        )


def test_an_open_without_its_close_is_never_emitted():
    # 6 has no close of its own: only 5 opens.
    constraint = BracketConstraint(
        VOCAB_SIZE, WORD, OPENS, CLOSES, eos_id=EOS_ID, matching_close_ids=[7, -1]
    )
    state = constraint.initial_state([2], [20], buffer_length=8)
    assert np.flatnonzero(np.asarray(constraint.allowed(state, 0))[0]).tolist() == [
        4,
        5,
    ]


def test_matching_needs_the_buffer_length():
    with pytest.raises(ValueError, match="buffer_length"):
        _matched_constraint().initial_state([2], [20])


def test_tree_length_limit_covers_every_bundled_gum_tree():
    """Every tree of the bundled treebank, eos included, fits the bound that
    sizes a parser's search buffer, with room to spare."""
    from pipelines import linearize, load_bundled_trees

    needed = []
    for split in ("train", "dev", "test"):
        trees, _ = load_bundled_trees(split)
        for tree in trees:
            words, symbols = linearize(tree)
            needed.append((len(words), len(symbols) + 1))
    counts, lengths = np.array(needed).T
    assert len(counts) == 4_636
    assert np.all(lengths <= tree_length_limit(counts))
    # The slack is not all used: some tree is within 8 symbols of the bound.
    assert 0 < np.min(tree_length_limit(counts) - lengths) <= 8


@pytest.mark.parametrize(
    "config",
    [
        DecodingConfig(beam_size=4, alpha=0.3, max_extra_length=300),
        DecodingConfig(method="greedy", max_extra_length=300),
    ],
    ids=["beam", "greedy"],
)
def test_a_buffer_sized_by_the_trees_finds_the_same_trees(tiny_model, config):
    """The parser's fast path: the buffer follows the batch's longest tree
    (`tree_length_limit`, rounded) instead of source width + 300; every row's
    limit is the tree bound either way, so the trees and scores are the
    same, in a 48-position buffer and in a 305-position one."""
    counts = np.array([1, 2, 3, 4], "int32")
    fn = compiled_translate(
        tiny_model, config, jit_compile=True, constraint=_matched_constraint()
    )
    slow = fn(_sources(), counts)
    fast = fn(_sources(), counts, 48)
    slow_ids, fast_ids = np.asarray(slow[0]), np.asarray(fast[0])
    assert slow_ids.shape[-1] == 5 + 300 and fast_ids.shape[-1] == 48
    np.testing.assert_array_equal(slow_ids[..., :48], fast_ids)
    assert not slow_ids[..., 48:].any()
    np.testing.assert_allclose(np.asarray(slow[1]), np.asarray(fast[1]), atol=1e-5)
    lengths = np.argmax(fast_ids == EOS_ID, axis=-1) + 1
    assert np.all(lengths <= tree_length_limit(counts)[:, None])


@tensorflow_only("traces with unknown shapes are TensorFlow's")
@pytest.mark.parametrize("jit_compile", [False, True], ids=["graph", "xla"])
def test_one_dynamic_shape_trace_serves_every_shape(
    tiny_model, monkeypatch, jit_compile
):
    # The same ids and scores as eager search for two batch sizes, widths and
    # buffers, from one trace (translate runs in Python only when tracing);
    # with XLA, each shape compiles from that trace.
    module = importlib.import_module("keras_transformer.decoding.compiled_translate")
    traces = []

    def counting(*args, **kwargs):
        traces.append(1)
        return translate(*args, **kwargs)

    monkeypatch.setattr(module, "translate", counting)
    config = DecodingConfig(beam_size=2, max_extra_length=12)
    constraint = _matched_constraint()
    fn = compiled_translate(
        tiny_model,
        config,
        jit_compile=jit_compile,
        constraint=constraint,
        dynamic_shapes=True,
    )
    sources, counts = _sources(), np.array([3, 1, 2, 2], "int32")
    for rows, width, buffer in [(4, sources.shape[1], 20), (2, 3, None)]:
        batch = sources[:rows, :width]
        eager = translate(
            tiny_model,
            batch,
            config,
            max_length=buffer or width + 12,
            constraint=constraint,
            word_counts=counts[:rows],
        )
        ids, scores = fn(batch, counts[:rows], buffer)
        np.testing.assert_array_equal(np.asarray(eager[0]), np.asarray(ids))
        np.testing.assert_allclose(np.asarray(eager[1]), np.asarray(scores), atol=1e-5)
    assert len(traces) == 1


@pytest.mark.parametrize("matched", [False, True], ids=["counters", "matched"])
def test_one_constrained_beam_keeps_the_greedy_hypothesis(tiny_model, matched):
    # Why `one_beam_as_greedy` may run greedy search for a parser's beam 1.
    counts = np.array([1, 3, 2, 4], "int32")
    make = _matched_constraint if matched else _constraint
    beam, greedy = (
        translate(
            tiny_model,
            _sources(),
            config,
            max_length=32,
            constraint=make(),
            word_counts=counts,
        )
        for config in (
            DecodingConfig(beam_size=1, alpha=0.6, max_extra_length=20),
            DecodingConfig(method="greedy", alpha=0.6, max_extra_length=20),
        )
    )
    np.testing.assert_array_equal(np.asarray(beam[0]), np.asarray(greedy[0]))
    np.testing.assert_allclose(np.asarray(beam[1]), np.asarray(greedy[1]), atol=1e-5)
    one = DecodingConfig(beam_size=1, constrain_brackets=True)
    assert one_beam_as_greedy(one).method == "greedy"
    for config in (dataclasses.replace(one, beam_size=2), DecodingConfig(beam_size=1)):
        assert one_beam_as_greedy(config) == config
