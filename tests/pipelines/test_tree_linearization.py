"""Tests of the §6.3 linearization of trees (Vinyals et al. 2015): the paper's
example, every repair rule of `delinearize` with a hand-computed tree, random
symbol sequences, and the round trip over all GUM trees."""

import dataclasses
import random
import re

import pytest

from pipelines.trees.tree import Tree, parse_tree
from pipelines.trees.tree_linearization import (
    PLACEHOLDER,
    ROOT_LABEL,
    RepairCounts,
    delinearize,
    linearize,
    retag,
    symbol_classes,
    target_symbols,
)
from pipelines.trees.treebank import BUNDLED_TREEBANKS, load_bundled_trees

GUM_TREES = 4636  # 3,707 + 438 + 491

# The example of Vinyals et al. (2015), "John has a dog .", written with XX.
PAPER_TREE = parse_tree(
    "(TOP (S (NP (NNP John)) (VP (VBZ has) (NP (DT a) (NN dog))) (. .)))"
)
PAPER_SYMBOLS = "(S (NP XX )NP (VP XX (NP XX XX )NP )VP XX )S"
PAPER_TAGGED = "(S (NP NNP )NP (VP VBZ (NP DT NN )NP )VP . )S"

_LABEL = re.compile(r"[^\s()]+")


def assert_well_formed(tree, words):
    """A `TOP` tree over exactly `words`: below the root, every constituent
    has a label and at least one child, and words sit only in preterminals."""
    assert tree.label == ROOT_LABEL
    assert tree.words() == tuple(words)
    assert not tree.is_preterminal
    pending = list(tree.children)
    while pending:
        node = pending.pop()
        assert isinstance(node, Tree)
        assert _LABEL.fullmatch(node.label), node
        if not node.is_preterminal:
            assert node.children, node
            pending.extend(node.children)


def test_paper_example():
    words, symbols = linearize(PAPER_TREE)
    assert words == ("John", "has", "a", "dog", ".")
    assert " ".join(symbols) == PAPER_SYMBOLS
    tree, repairs = delinearize(symbols, words)
    assert str(tree) == (
        "(TOP (S (NP (XX John)) (VP (XX has) (NP (XX a) (XX dog))) (XX .)))"
    )
    assert repairs == RepairCounts()
    assert retag(tree, [p.label for p in PAPER_TREE.preterminals()]) == PAPER_TREE


def test_paper_example_with_tags():
    words, symbols = linearize(PAPER_TREE, tags=True)
    assert " ".join(symbols) == PAPER_TAGGED
    tree, repairs = delinearize(symbols, words, tags=True)
    assert tree == PAPER_TREE
    assert repairs.total == 0
    # Without tags=True a tag is not a leaf symbol.
    tree, repairs = delinearize(symbols, words)
    assert repairs == RepairCounts(
        unknown_symbols=5, missing_leaves=5, empty_constituents=4
    )


@pytest.mark.parametrize(
    "text, symbols",
    [
        # Several children under the root.
        ("(TOP (S (VP (VB Go))) (. .))", "(S (VP XX )VP )S XX"),
        # A unary chain.
        ("(TOP (S (VP (VP (VB Go)))))", "(S (VP (VP XX )VP )VP )S"),
        # A preterminal right under the root, as GUM's `(ROOT (VB See))`.
        ("(TOP (VB See))", "XX"),
        # The root's own label is not written: another root comes back TOP.
        ("(ROOT (NP (NN Introduction)))", "(NP XX )NP"),
    ],
)
def test_root_children_and_unary_chains(text, symbols):
    tree = parse_tree(text)
    words, written = linearize(tree)
    assert " ".join(written) == symbols
    back, repairs = delinearize(written, words)
    assert repairs.total == 0
    tagged = linearize(tree, tags=True)
    back_tagged, _ = delinearize(tagged[1], tagged[0], tags=True)
    assert back_tagged == Tree(ROOT_LABEL, tree.children)


@pytest.mark.parametrize(
    "tree, message",
    [
        (Tree("TOP", ("word",)), "root is a preterminal"),
        (Tree("TOP", (Tree("NP", ()),)), "Received: \\(NP \\)"),
        (Tree("TOP", (Tree("", (Tree("NN", ("a",)),)),)), "label without"),
        (Tree("TOP", (Tree("N P", (Tree("NN", ("a",)),)),)), "label without"),
        (Tree("TOP", (Tree("NP", ("a", Tree("NN", ("b",)))),)), "outside"),
    ],
)
def test_linearize_rejects_what_cannot_round_trip(tree, message):
    with pytest.raises(ValueError, match=message):
        linearize(tree)


@pytest.mark.parametrize("tag", ["<unk>", "N(N", ""])
def test_linearize_rejects_bad_tags_only_with_tags(tag):
    tree = Tree("TOP", (Tree("NP", (Tree(tag, ("a",)),)),))
    assert linearize(tree)[1] == ("(NP", "XX", ")NP")
    with pytest.raises(ValueError, match=f"Received: {re.escape(repr(tag))}"):
        linearize(tree, tags=True)


@pytest.mark.parametrize(
    "symbols, words, expected, repairs",
    [
        # A close with nothing open is dropped.
        (
            ")NP (NP XX )NP )S XX",
            "a b",
            "(TOP (NP (XX a)) (XX b))",
            RepairCounts(unopened_closes=2),
        ),
        # A close with the wrong label closes the innermost open bracket,
        # even when an outer bracket has that label.
        (
            "(S (NP XX )S XX )S",
            "a b",
            "(TOP (S (NP (XX a)) (XX b)))",
            RepairCounts(mismatched_closes=1),
        ),
        (
            "(S (VP XX )NP )VP",
            "a",
            "(TOP (S (VP (XX a))))",
            RepairCounts(mismatched_closes=2),
        ),
        # Brackets still open at the end are closed.
        (
            "(S (NP XX XX",
            "a b",
            "(TOP (S (NP (XX a) (XX b))))",
            RepairCounts(unclosed_opens=2),
        ),
        # Too few XX: the remaining words go under the root, at the end.
        (
            "(S (NP XX )NP )S",
            "a b c",
            "(TOP (S (NP (XX a))) (XX b) (XX c))",
            RepairCounts(missing_leaves=2),
        ),
        (
            "(S XX",
            "a b",
            "(TOP (S (XX a)) (XX b))",
            RepairCounts(unclosed_opens=1, missing_leaves=1),
        ),
        # Too many XX: dropped.
        (
            "(S XX XX )S XX",
            "a",
            "(TOP (S (XX a)))",
            RepairCounts(extra_leaves=2),
        ),
        # Garbage: reserved pieces, bare brackets, a tag without tags=True.
        (
            "<unk> (S XX ( ) NP )S </s> ((S",
            "a",
            "(TOP (S (XX a)))",
            RepairCounts(unknown_symbols=6),
        ),
        # Empty constituents, nested ones one each, an unclosed one twice.
        (
            "(S (NP )NP XX )S",
            "a",
            "(TOP (S (XX a)))",
            RepairCounts(empty_constituents=1),
        ),
        (
            "(S (VP (NP )NP )VP XX )S",
            "a",
            "(TOP (S (XX a)))",
            RepairCounts(empty_constituents=2),
        ),
        (
            "(S XX )S (NP",
            "a",
            "(TOP (S (XX a)))",
            RepairCounts(unclosed_opens=1, empty_constituents=1),
        ),
        # No words: the empty tree.
        (
            "(S XX )S",
            "",
            "(TOP )",
            RepairCounts(extra_leaves=1, empty_constituents=1),
        ),
    ],
)
def test_each_repair(symbols, words, expected, repairs):
    tree, counted = delinearize(symbols.split(), words.split())
    assert str(tree) == expected
    assert counted == repairs
    assert_well_formed(tree, words.split())


def test_garbage_with_tags_and_vocabulary():
    tree, repairs = delinearize("(S DT <unk> NN )S", "the cat", tags=True)
    assert str(tree) == "(TOP (S (DT the) (NN cat)))"
    assert repairs == RepairCounts(unknown_symbols=1)
    # A vocabulary makes any symbol outside it unknown.
    tree, repairs = delinearize(
        "(S (FOO XX )FOO XX )S", "a b", vocabulary={"(S", ")S", "XX"}
    )
    assert str(tree) == "(TOP (S (XX a) (XX b)))"
    assert repairs == RepairCounts(unknown_symbols=2)
    # Symbols that are not strings are unknown too.
    tree, repairs = delinearize([None, b"XX", "XX", 3], ["a"])
    assert str(tree) == "(TOP (XX a))"
    assert repairs == RepairCounts(unknown_symbols=3)


def test_empty_tree():
    tree, repairs = delinearize([], [])
    assert tree == Tree("TOP", ())
    assert str(tree) == "(TOP )"
    assert repairs.total == 0
    assert linearize(tree) == ((), ())


def test_strings_and_sequences_agree():
    assert delinearize(PAPER_SYMBOLS, "John has a dog .") == delinearize(
        PAPER_SYMBOLS.split(), ("John", "has", "a", "dog", ".")
    )


def test_words_must_be_strings():
    with pytest.raises(TypeError, match="Received: b'a'"):
        delinearize(["XX"], [b"a"])


def test_retag_needs_one_tag_per_word():
    tree, _ = delinearize("(NP XX XX )NP", "the cat")
    assert str(retag(tree, ["DT", "NN"])) == "(TOP (NP (DT the) (NN cat)))"
    with pytest.raises(ValueError, match="2 words. Received: 1 tags"):
        retag(tree, ["DT"])


def test_repair_counts_sum_and_print():
    a = RepairCounts(unopened_closes=1, extra_leaves=2)
    b = RepairCounts(extra_leaves=1, empty_constituents=4)
    assert a + b == RepairCounts(
        unopened_closes=1, extra_leaves=3, empty_constituents=4
    )
    assert sum([a, b]) == a + b
    assert sum([], RepairCounts()) == RepairCounts()
    assert (a + b).total == 8
    assert str(RepairCounts(missing_leaves=1)) == (
        "1 repair (unopened_closes=0, mismatched_closes=0, unclosed_opens=0, "
        "missing_leaves=1, extra_leaves=0, unknown_symbols=0, "
        "empty_constituents=0)"
    )
    assert "\n" not in str(a + b)
    assert str(a + b).startswith("8 repairs (")
    with pytest.raises(TypeError):
        a + 1


def test_target_symbols():
    trees = [PAPER_TREE, parse_tree("(TOP (S (NP (PRP I)) (VP (VBD ran))))")]
    assert target_symbols(trees) == (
        "(NP",
        "(S",
        "(VP",
        ")NP",
        ")S",
        ")VP",
        "XX",
    )
    assert target_symbols(reversed(trees), tags=True) == (
        "(NP",
        "(S",
        "(VP",
        ")NP",
        ")S",
        ")VP",
        ".",
        "DT",
        "NN",
        "NNP",
        "PRP",
        "VBD",
        "VBZ",
    )


# Random sequences: (symbol, kind) with the kind known independently of the
# code under test.
_POOL = (
    [("(" + label, "open") for label in ("S", "NP", "VP")]
    + [(")" + label, "close") for label in ("S", "NP", "VP")]
    + [("XX", "leaf")] * 4
    + [("NN", "tag"), ("<unk>", "unknown"), ("(", "unknown"), (")", "unknown")]
    + [("", "unknown"), ("</s>", "unknown")]
)


@pytest.mark.parametrize("tags", [False, True])
def test_random_sequences_give_well_formed_trees(tags):
    rng = random.Random(20150711 + tags)
    total = RepairCounts()
    for _ in range(3000):
        words = [f"w{i}" for i in range(rng.randrange(8))]
        drawn = [rng.choice(_POOL) for _ in range(rng.randrange(20))]
        symbols = [symbol for symbol, _ in drawn]
        kinds = [kind for _, kind in drawn]
        tree, repairs = delinearize(symbols, words, tags=tags)
        assert_well_formed(tree, words)
        total += repairs
        # Every symbol is used or counted as dropped.
        leaves = kinds.count("leaf") + (kinds.count("tag") if tags else 0)
        unknown = kinds.count("unknown") + (0 if tags else kinds.count("tag"))
        assert repairs.unknown_symbols == unknown
        assert leaves == len(words) - repairs.missing_leaves + repairs.extra_leaves
        closed = kinds.count("close") - repairs.unopened_closes
        assert kinds.count("open") == closed + repairs.unclosed_opens
        # The repaired tree is a fixed point: it needs no further repair.
        again = delinearize(linearize(tree, tags)[1], words, tags=tags)
        assert again == (tree, RepairCounts())
    # Every kind of repair happened somewhere.
    assert all(dataclasses.astuple(total)), total


def gum_trees():
    """Every bundled GUM tree, normalised as the treebank reader does."""
    trees = []
    for split in BUNDLED_TREEBANKS["gum"]:
        trees.extend(load_bundled_trees(split)[0])
    return trees


def test_round_trip_over_all_gum_trees():
    trees = gum_trees()
    assert len(trees) == GUM_TREES
    total = RepairCounts()
    for tree in trees:
        words, symbols = linearize(tree, tags=True)
        back, repairs = delinearize(symbols, words, tags=True)
        assert back == tree, str(tree)
        total += repairs
        words, symbols = linearize(tree)
        assert symbols.count(PLACEHOLDER) == len(words)
        back, repairs = delinearize(symbols, words)
        assert retag(back, [p.label for p in tree.preterminals()]) == tree
        total += repairs
    assert total == RepairCounts()
    vocabulary = target_symbols(trees)
    assert vocabulary == tuple(sorted(set(vocabulary)))
    assert {"(NP", ")NP", "XX"} <= set(vocabulary)
    assert not any("-SBJ" in symbol for symbol in vocabulary)  # tags stripped


def test_symbol_classes_read_symbols_as_delinearize_does():
    vocabulary = ["<pad>", "<unk>", "<s>", "</s>", "(NP", "(S", ")NP", ")S"]
    vocabulary += ["-LRB-", "NN", "XX", "("]
    assert symbol_classes(vocabulary) == ([10], [4, 5], [6, 7])
    # With tags every well-formed label is a leaf (not "(" or the specials).
    assert symbol_classes(vocabulary, tags=True) == ([8, 9, 10], [4, 5], [6, 7])


def test_trees_deeper_than_the_recursion_limit_print_and_retag():
    # A decoder can nest brackets thousands deep: printing, the words and
    # retagging must not recurse.
    depth = 5_000
    symbols = ["(S"] * depth + ["XX", "XX"] + [")S"] * depth
    tree, repairs = delinearize(symbols, ["a", "b"])
    assert repairs.total == 0 and tree.words() == ("a", "b")
    text = str(retag(tree, ["DT", "NN"]))
    assert text == "(TOP " + "(S " * depth + "(DT a) (NN b)" + ")" * (depth + 1)
