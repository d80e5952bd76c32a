"""Baseline parses for §6.3: what a parser must beat, scored like a parser.

Two trees over a sentence's words that need no model: a **flat** tree, one
constituent spanning the sentence, and a **right-branching** tree, a
constituent for every suffix of two or more words (the classic baseline of
English, a right-branching language). Their leaves carry the placeholder tag
`XX`, as a parser's `XX` output does, so the scorer puts the gold tags on them
(EVALB deletes punctuation by tag). Labels are a corpus's most frequent ones
(`baseline_labels`): the top constituent's, and below it the most frequent
phrase label, so that the labelled scores are the best these shapes can get
with one label each.

>>> str(right_branching_tree(["a", "b", "c"], top_label="S", inner_label="VP"))
'(TOP (S (XX a) (VP (XX b) (XX c))))'
"""

from collections import Counter
from collections.abc import Iterable, Sequence

from pipelines.trees.tree import ROOT_LABEL, Tree
from pipelines.trees.tree_linearization import PLACEHOLDER


def _leaves(words: Sequence[str]) -> tuple[Tree, ...]:
    return tuple(Tree(PLACEHOLDER, (word,)) for word in words)


def flat_tree(words: Sequence[str], top_label: str = "S") -> Tree:
    """`(TOP (top_label (XX w1) ... (XX wn)))`; no words: `(TOP )`.

    Args:
        words: sequence of str. The sentence.
        top_label: str. The label of the one constituent. Defaults to `"S"`.

    Returns:
        A `Tree`.
    """
    if not words:
        return Tree(ROOT_LABEL, ())
    return Tree(ROOT_LABEL, (Tree(top_label, _leaves(words)),))


def right_branching_tree(
    words: Sequence[str], top_label: str = "S", inner_label: str = "NP"
) -> Tree:
    """`(TOP (top_label (XX w1) (inner_label (XX w2) (inner_label ...))))`:
    a constituent for every suffix of two or more words, the whole sentence
    labelled `top_label`; no words: `(TOP )`.

    Args:
        words: sequence of str. The sentence.
        top_label: str. The label of the whole sentence. Defaults to `"S"`.
        inner_label: str. The label of every shorter suffix. Defaults to
            `"NP"`.

    Returns:
        A `Tree`.
    """
    if not words:
        return Tree(ROOT_LABEL, ())
    leaves = _leaves(words)
    tree = leaves[-1]
    for leaf in reversed(leaves[:-1]):
        tree = Tree(inner_label, (leaf, tree))
    if tree.is_preterminal:  # one word
        return Tree(ROOT_LABEL, (Tree(top_label, (tree,)),))
    return Tree(ROOT_LABEL, (Tree(top_label, tree.children),))


def baseline_labels(trees: Iterable[Tree]) -> tuple[str, str]:
    """`(top_label, inner_label)`: the most frequent label of the root's
    children and the most frequent phrase label below them (ties: the
    alphabetically first), over normalised trees (root `TOP`).

    Args:
        trees: iterable of `Tree`. Normalised trees, e.g. a training split.

    Returns:
        `(top_label, inner_label)`, two str.

    Raises:
        ValueError: no tree has a phrase below the root.
    """
    top, inner = Counter(), Counter()
    for tree in trees:
        for child in tree.children:
            if isinstance(child, Tree) and not child.is_preterminal:
                top[child.label] += 1
                _count_phrases(child, inner)
    if not top:
        raise ValueError("baseline_labels needs trees with phrases. Received none.")
    inner = inner or top

    def most_frequent(counts):
        return min(counts, key=lambda label: (-counts[label], label))

    return most_frequent(top), most_frequent(inner)


def _count_phrases(tree, counts):
    for child in tree.children:
        if not child.is_preterminal:
            counts[child.label] += 1
            _count_phrases(child, counts)
