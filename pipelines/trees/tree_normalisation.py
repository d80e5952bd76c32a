"""Tree normalisation for parsing (§6.3), as the standard parsing pipelines
do before training and scoring: `-NONE-` traces and the constituents they
leave empty are removed, function tags and indices are stripped (`NP-SBJ-1`
-> `NP`, `NP=2` -> `NP`; a label starting with '-', such as `-LRB-`, is kept
whole) and the root is labelled `TOP` (`pipelines.trees.tree.ROOT_LABEL`)."""

import re

from pipelines.trees.tree import ROOT_LABEL, Tree

# Root labels that `normalise_tree` relabels `TOP` rather than wraps: LDC's
# unlabelled outer bracket, Stanford's and GUM's `ROOT`, and `TOP` itself.
ROOT_LABELS = ("", "ROOT", "TOP")
TRACE_TAG = "-NONE-"


def strip_function_tags(label: str) -> str:
    """Removes function tags and indices: `NP-SBJ-1` -> `NP`, `PP-LOC=2` ->
    `PP`. A label starting with '-' (`-NONE-`, `-LRB-`, `-RRB-`) is kept whole.

    Args:
        label: str. A constituent or tag label.

    Returns:
        str.
    """
    if label.startswith("-"):
        return label
    return re.split(r"[-=]", label, maxsplit=1)[0] or label


def normalise_tree(tree: Tree) -> Tree | None:
    """Normalises one tree as the standard parsing pipelines do (§6.3).

    Removes `-NONE-` preterminals (traces, empty elements) and the
    constituents they leave without children, strips function tags and
    indices from every label (`strip_function_tags`), and labels the root
    `TOP`: a root labelled `""` (LDC's `( (S ...) )`), `ROOT` or `TOP` is
    relabelled, any other root is wrapped in a new `TOP`. Words, `-LRB-` and
    `-RRB-` included, are kept as they are.

    Args:
        tree: Tree. A tree as read from a bracket file.

    Returns:
        The normalised tree, or `None` when no word is left.
    """
    return normalise_root(tree)[0]


def normalise_root(tree):
    """`(normalised tree or None, whether anything but the root label
    changed)`."""
    if tree.label in ROOT_LABELS and not tree.is_preterminal:
        children = tree.children
    else:
        children = (tree,)
    kept, changed = [], False
    for child in children:
        normalised = _normalise(child)
        changed = changed or normalised is not child
        if normalised is not None:
            kept.append(normalised)
    if not kept:
        return None, True
    return Tree(ROOT_LABEL, tuple(kept)), changed


def _normalise(tree):
    """The normalised `tree` (the same object when unchanged), or `None`."""
    if tree.is_preterminal:
        if tree.label == TRACE_TAG:
            return None
        label = strip_function_tags(tree.label)
        return tree if label == tree.label else Tree(label, tree.children)
    normalised = [_normalise(child) for child in tree.children]
    children = tuple(child for child in normalised if child is not None)
    if not children:
        return None
    label = strip_function_tags(tree.label)
    if label == tree.label and all(
        new is old for new, old in zip(normalised, tree.children, strict=True)
    ):
        return tree
    return Tree(label, children)
