import doctest

import pytest

from keras_transformer.evaluation import evalb
from pipelines import load_bundled_trees, parse_tree
from pipelines.trees import tree_baselines
from pipelines.trees.tree_baselines import (
    baseline_labels,
    flat_tree,
    right_branching_tree,
)

GOLD = parse_tree(
    "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) "
    "(NN mat)))) (. .)))"
)


def test_shapes():
    words = ["a", "b", "c"]
    assert str(flat_tree(words)) == "(TOP (S (XX a) (XX b) (XX c)))"
    assert str(right_branching_tree(words)) == "(TOP (S (XX a) (NP (XX b) (XX c))))"
    assert str(right_branching_tree(["a"])) == "(TOP (S (XX a)))"
    assert str(flat_tree([])) == str(right_branching_tree([])) == "(TOP )"
    assert tree_baselines.right_branching_tree(words).words() == tuple(words)


def test_scores_by_hand():
    # Gold brackets after COLLINS.prm's deletions (TOP, the "." with its word):
    # S[0,6] NP[0,2] VP[2,6] PP[3,6] NP[4,6]. Right-branching over all 7
    # words, then "." deleted: S[0,6] NP[1,6] NP[2,6] NP[3,6] NP[4,6] and
    # NP[5,6] (over "mat ."), 2 of the 6 right.
    words = list(GOLD.words())
    right = evalb([str(GOLD)], [str(right_branching_tree(words))]).all
    assert (right.matched, right.gold_brackets, right.test_brackets) == (2, 5, 6)
    assert right.f_measure == pytest.approx(2 * 40 * (200 / 6) / (40 + 200 / 6))
    flat = evalb([str(GOLD)], [str(flat_tree(words))]).all
    assert (flat.matched, flat.gold_brackets, flat.test_brackets) == (1, 5, 1)
    assert flat.f_measure == pytest.approx(2 * 20 * 100 / 120)


def test_baseline_labels_are_the_most_frequent():
    frag = parse_tree("(TOP (FRAG (NP (NN x)) (NP (NN y))))")
    assert baseline_labels([GOLD, frag]) == ("FRAG", "NP")  # a tie: alphabetical
    assert baseline_labels([GOLD, GOLD, frag]) == ("S", "NP")
    assert baseline_labels(load_bundled_trees("train")[0]) == ("S", "NP")
    with pytest.raises(ValueError, match="needs trees with phrases"):
        baseline_labels([parse_tree("(TOP (NN x))")])


def test_docstring_example():
    assert doctest.testmod(tree_baselines).failed == 0
