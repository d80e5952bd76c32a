"""Tests of the graph de-linearization of §6.3 parses (Vinyals et al. 2015):
the Python `delinearize` is the specification, and the graph path must give
the same tree string and repair counts on every hand-written repair case, on
seeded random symbol sequences, on the linearized GUM dev trees, and after a
SavedModel round trip."""

import dataclasses
import random

import numpy as np
import pytest
import tensorflow as tf

from pipelines.trees.graph_delinearization import REPAIR_FIELDS, delinearize_graph
from pipelines.trees.tree_linearization import RepairCounts, delinearize, linearize
from pipelines.trees.treebank import load_bundled_trees

RANDOM_CASES = 2000  # per mode
BATCH = 500

# (symbols, words): every repair rule, alone and together, and edge cases.
HAND_CASES = [
    ("(S (NP XX )NP (VP XX (NP XX XX )NP )VP XX )S", "John has a dog ."),
    ("(S (NP XX )VP XX", "I ran ."),
    ("", ""),
    ("", "a b"),
    ("(S XX )S", ""),
    ("XX XX", ""),
    ("(S )S", ""),
    (")S (S XX )S )S )NP", "a"),
    ("(S (NP XX )S )S", "a"),
    ("(S (NP XX XX", "a b"),
    ("(S XX )S", "a b c"),
    ("(S XX XX XX )S", "a"),
    ("<unk> ( ) (( )( XX", "a"),
    ("(S (NP )NP XX (VP (PP )PP )VP )S", "a"),
    ("(S (VP (NP XX )NP )VP )S", "a"),
    ("(NP XX XX )NP", "the cat"),
    ("NN (S DT NN )S <unk> <s> XX", "a b c d"),
    ("(S\u00a0 (NP XX )NP\u3000 (é XX )é", "x y"),
    ("(S XX )S", ["(a)", "b c"]),
    ("(S (S (S", "a"),
]


def ragged(rows):
    return tf.ragged.constant(
        [list(row) for row in rows], dtype=tf.string, ragged_rank=1
    )


def as_list(text):
    return text.split() if isinstance(text, str) else list(text)


@tf.function(reduce_retracing=True)
def _graph_plain(symbols, words):
    return delinearize_graph(symbols, words, tags=False)


@tf.function(reduce_retracing=True)
def _graph_tagged(symbols, words):
    return delinearize_graph(symbols, words, tags=True)


def graph_results(cases, tags):
    """`[(tree string, repair tuple)]` of the graph path, in batches."""
    function = _graph_tagged if tags else _graph_plain
    results = []
    for start in range(0, len(cases), BATCH):
        chunk = cases[start : start + BATCH]
        trees, repairs = function(
            ragged(symbols for symbols, _ in chunk),
            ragged(words for _, words in chunk),
        )
        assert trees.shape == (len(chunk),) and trees.dtype == tf.string
        assert repairs.shape == (len(chunk), len(REPAIR_FIELDS))
        assert repairs.dtype == tf.int32
        results.extend(
            (tree.decode(), tuple(row))
            for tree, row in zip(trees.numpy(), repairs.numpy().tolist(), strict=True)
        )
    return results


def python_results(cases, tags):
    results = []
    for symbols, words in cases:
        tree, repairs = delinearize(list(symbols), list(words), tags)
        results.append((str(tree), dataclasses.astuple(repairs)))
    return results


def assert_paths_agree(cases, tags):
    graph, python = graph_results(cases, tags), python_results(cases, tags)
    for case, got, expected in zip(cases, graph, python, strict=True):
        assert got == expected, f"{case} (tags={tags})"


def test_repair_fields_follow_the_dataclass():
    assert REPAIR_FIELDS == tuple(f.name for f in dataclasses.fields(RepairCounts))
    assert len(REPAIR_FIELDS) == 7


@pytest.mark.parametrize("tags", [False, True])
def test_hand_written_cases_match_python(tags):
    cases = [(as_list(symbols), as_list(words)) for symbols, words in HAND_CASES]
    assert_paths_agree(cases, tags)


def test_every_repair_kind_is_exercised():
    # The hand cases must cover every field, or the comparison proves little.
    cases = [(as_list(s), as_list(w)) for s, w in HAND_CASES]
    totals = np.sum([r for _, r in graph_results(cases, tags=False)], axis=0)
    assert np.all(totals > 0), dict(zip(REPAIR_FIELDS, totals, strict=True))


def test_paper_example_and_docstring_example():
    trees, repairs = delinearize_graph(
        ragged([as_list("(S (NP XX )VP XX"), as_list(HAND_CASES[0][0])]),
        ragged([as_list("I ran ."), as_list(HAND_CASES[0][1])]),
    )
    assert trees.numpy().tolist() == [
        b"(TOP (S (NP (XX I)) (XX ran)) (XX .))",
        b"(TOP (S (NP (XX John)) (VP (XX has) (NP (XX a) (XX dog))) (XX .)))",
    ]
    assert repairs.numpy().tolist() == [[0, 1, 1, 1, 0, 0, 0], [0] * 7]


_LABELS = ("S", "NP", "VP", "PP", "é", "A-B", "NP=2")
_TAGS = ("XX", "NN", "DT", ".", ",", "-LRB-")
_GARBAGE = (
    "",
    "(",
    ")",
    "((",
    ")(",
    "(NP)",
    "a(b",
    "<unk>",
    "<s>",
    "</s>",
    "<pad>",
    "(N P",
    "(NP\u00a0",
    ")\u2003VP",
    "N\tN",
    "\u3000",
)
_WORDS = ("the", "cat", "(", ")", "a b", "é", "", "XX", "(NP")


def _random_tree_symbols(rng, depth=0):
    """The symbols of a random valid constituent, tags as leaves."""
    label = rng.choice(_LABELS)
    children = []
    for _ in range(rng.randint(1, 3)):
        if depth < 3 and rng.random() < 0.4:
            children += _random_tree_symbols(rng, depth + 1)
        else:
            children.append(rng.choice(_TAGS))
    return ["(" + label, *children, ")" + label]


def _random_symbol(rng):
    pick = rng.random()
    if pick < 0.3:
        return "(" + rng.choice(_LABELS)
    if pick < 0.6:
        return ")" + rng.choice(_LABELS)
    if pick < 0.85:
        return rng.choice(_TAGS)
    return rng.choice(_GARBAGE)


def random_cases(seed, count, tags=False):
    """Valid trees mutated (wrong closes, extra or missing leaves, garbage,
    empty brackets) and pure noise, over 0 to 12 random words; without
    `tags`, most leaves are `XX` and the other tags are garbage."""
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        if rng.random() < 0.7:
            symbols = []
            for _ in range(rng.randint(0, 3)):
                symbols += _random_tree_symbols(rng)
            for _ in range(rng.choice((0, 0, 1, 2, 4))):
                position = rng.randint(0, len(symbols))
                action = rng.random()
                if action < 0.3 and symbols:
                    del symbols[min(position, len(symbols) - 1)]
                elif action < 0.5:
                    label = rng.choice(_LABELS)
                    symbols[position:position] = ["(" + label, ")" + label]
                else:
                    symbols.insert(position, _random_symbol(rng))
        else:
            symbols = [_random_symbol(rng) for _ in range(rng.randint(0, 30))]
        if not tags:
            symbols = [
                "XX" if s in _TAGS and rng.random() < 0.9 else s for s in symbols
            ]
        leaves = sum(s in (_TAGS if tags else ("XX",)) for s in symbols)
        count_words = max(0, leaves + rng.choice((-2, -1, 0, 0, 0, 1, 2)))
        if rng.random() < 0.1:
            count_words = rng.randint(0, 12)
        words = [rng.choice(_WORDS) for _ in range(count_words)]
        cases.append((symbols, words))
    return cases


@pytest.mark.parametrize("tags", [False, True])
def test_random_sequences_match_python(tags):
    cases = random_cases(seed=20150 + tags, count=RANDOM_CASES, tags=tags)
    # The generator must reach every repair, or agreement proves little.
    python = python_results(cases, tags)
    totals = np.sum([repairs for _, repairs in python], axis=0)
    assert np.all(totals > 0), dict(zip(REPAIR_FIELDS, totals, strict=True))
    assert sum(repairs == (0,) * 7 for _, repairs in python) > 100
    assert_paths_agree(cases, tags)


@pytest.mark.parametrize("tags", [False, True])
def test_gum_dev_trees_come_back(tags):
    trees = load_bundled_trees("dev")[0]
    cases = [linearize(tree, tags)[::-1] for tree in trees]
    got = graph_results(cases, tags)
    for tree, case, (text, repairs) in zip(trees, cases, got, strict=True):
        assert repairs == (0,) * 7, case
        assert text == str(delinearize(case[0], case[1], tags)[0])
        if tags:
            assert text == str(tree)


class _Parser(tf.Module):
    """A stand-in for the exported parser: padded strings and lengths in."""

    @tf.function(
        input_signature=[
            tf.TensorSpec([None, None], tf.string),
            tf.TensorSpec([None], tf.int64),
            tf.TensorSpec([None, None], tf.string),
            tf.TensorSpec([None], tf.int64),
        ]
    )
    def __call__(self, symbols, symbol_lengths, words, word_lengths):
        trees, repairs = delinearize_graph(
            tf.RaggedTensor.from_tensor(symbols, lengths=symbol_lengths),
            tf.RaggedTensor.from_tensor(words, lengths=word_lengths),
        )
        return {"trees": trees, "repairs": repairs}


def _padded(rows):
    values = ragged(rows)
    return values.to_tensor(default_value=""), values.row_lengths()


def test_saved_model_round_trip(tmp_path):
    cases = [(as_list(s), as_list(w)) for s, w in HAND_CASES]
    cases += random_cases(seed=7, count=200)
    symbols, symbol_lengths = _padded(s for s, _ in cases)
    words, word_lengths = _padded(w for _, w in cases)
    module = _Parser()
    expected = module(symbols, symbol_lengths, words, word_lengths)
    path = str(tmp_path / "parser" / "1")
    tf.saved_model.save(module, path)
    loaded = tf.saved_model.load(path)
    got = loaded(symbols, symbol_lengths, words, word_lengths)
    assert got["trees"].numpy().tolist() == expected["trees"].numpy().tolist()
    np.testing.assert_array_equal(got["repairs"], expected["repairs"])
    python = python_results(cases, tags=False)
    assert [t.decode() for t in got["trees"].numpy()] == [t for t, _ in python]
    # TF Serving runs no Python: no py_function anywhere in the graph.
    graph = module.__call__.get_concrete_function().graph.as_graph_def()
    ops = {node.op for node in graph.node}
    ops |= {node.op for f in graph.library.function for node in f.node_def}
    assert not ops & {"PyFunc", "EagerPyFunc", "PyFuncStateless"}, ops


def test_non_string_input_is_rejected():
    with pytest.raises(ValueError, match="tf.string RaggedTensor"):
        delinearize_graph(tf.ragged.constant([[1, 2]]), ragged([["a"]]))


def test_empty_batch():
    empty = tf.RaggedTensor.from_row_lengths(
        tf.constant([], tf.string), tf.constant([], tf.int64)
    )
    trees, repairs = tf.function(delinearize_graph)(empty, empty)
    assert trees.shape == (0,) and repairs.shape == (0, 7)
