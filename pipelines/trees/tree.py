"""Constituency trees in Penn Treebank brackets: one small immutable type and
its reader and writer, shared by the treebank reader, the linearization of
§6.3 and the EVALB-compatible scorer.

A `Tree` is a label and a tuple of children; a preterminal's only child is
its word (a `str`):

>>> tree = parse_tree("(S (NP (DT The) (NN cat)) (VP (VBD sat)))")
>>> tree.words()
('The', 'cat', 'sat')
>>> str(tree)
'(S (NP (DT The) (NN cat)) (VP (VBD sat)))'

`read_trees` reads any number of trees from text: one per line or spread
over many lines (as LDC's `.mrg` files), blank lines between them or not,
with an unlabelled outer bracket (`( (S ...) )` or `((S ...))`) kept as a
tree of label `""`. Unbalanced brackets, a word outside a preterminal, or
text outside any tree fail naming the source and line.
"""

import dataclasses
import re
from collections.abc import Iterator

_TOKEN = re.compile(r"\(|\)|[^\s()]+")
# The root label of a normalised tree (`pipelines.trees.tree_normalisation`) and of
# every tree `pipelines.trees.tree_linearization.delinearize` builds.
ROOT_LABEL = "TOP"


@dataclasses.dataclass(frozen=True)
class Tree:
    """A constituent: `label` and `children` (trees, or one word for a
    preterminal)."""

    label: str
    children: tuple = ()

    @property
    def is_preterminal(self) -> bool:
        return len(self.children) == 1 and isinstance(self.children[0], str)

    def words(self) -> tuple[str, ...]:
        """The words at the leaves, left to right."""
        return tuple(p.children[0] for p in self.preterminals())

    def preterminals(self) -> tuple["Tree", ...]:
        """The preterminals (tag and word), left to right."""
        found, pending = [], [self]  # a stack, so any depth works
        while pending:
            tree = pending.pop()
            if tree.is_preterminal:
                found.append(tree)
            else:
                pending.extend(reversed(tree.children))
        return tuple(found)

    def __str__(self) -> str:
        # Iterative, not recursive: a decoder's output can nest brackets
        # deeper than Python's recursion limit.
        parts, pending = [], [self]
        while pending:
            tree = pending.pop()
            if isinstance(tree, str):  # a closing bracket, or " " between
                parts.append(tree)
            elif tree.is_preterminal:
                parts.append(f"({tree.label} {tree.children[0]})")
            else:
                parts.append(f"({tree.label} " if tree.label else "( ")
                pending.append(")")
                for index in range(len(tree.children) - 1, -1, -1):
                    pending.append(tree.children[index])
                    if index:
                        pending.append(" ")
        return "".join(parts)


class TreeSyntaxError(ValueError):
    """Malformed brackets; the message names the source and line."""


def read_trees(text: str, source: str = "<string>") -> Iterator[tuple[int, Tree]]:
    """Yields `(line, tree)` for each bracketed tree of `text` (`line` is the
    1-based line where the tree opens).

    Args:
        text: str. Trees in Penn Treebank brackets, any layout.
        source: str. What `text` is, for error messages (a file name).
            Defaults to `"<string>"`.

    Yields:
        `(line, tree)`: an int and a `Tree`.

    Raises:
        TreeSyntaxError: unbalanced brackets, a word outside a preterminal,
            an empty constituent `()`, or text outside any tree, naming
            `source` and the line.
    """
    stack = []  # [label, children, line] of the open constituents
    expect_label = False  # just after "(": a word here is the label
    for number, token in _tokens(text):
        if expect_label:
            expect_label = False
            if token not in ("(", ")"):
                stack[-1][0] = token
                continue
        if token == "(":
            if stack and _words(stack[-1][1]):
                _word_outside(stack[-1], _words(stack[-1][1])[0], source, number)
            stack.append(["", [], number])
            expect_label = True
        elif token == ")":
            if not stack:
                raise TreeSyntaxError(f"Unbalanced ')' in {source} at line {number}")
            label, children, opened = stack.pop()
            if not children:
                raise TreeSyntaxError(f"Empty constituent in {source} at line {opened}")
            tree = Tree(label, tuple(children))
            if stack:
                stack[-1][1].append(tree)
            else:
                yield opened, tree
        else:
            if not stack:
                raise TreeSyntaxError(
                    f"Text outside a tree in {source} at line {number}. "
                    f"Received: {token!r}"
                )
            if not stack[-1][0] or stack[-1][1]:
                _word_outside(stack[-1], token, source, number)
            stack[-1][1].append(token)
    if stack:
        raise TreeSyntaxError(
            f"Unbalanced '(' in {source}: the tree opened at line {stack[0][2]} "
            "is not closed"
        )


def _tokens(text):
    """`(line, token)` for each bracket and word of `text`."""
    for number, line in enumerate(text.splitlines(), start=1):
        for token in _TOKEN.findall(line):
            yield number, token


def _words(children):
    return [child for child in children if isinstance(child, str)]


def _word_outside(constituent, word, source, line):
    """Raises for `word` in `constituent` (an open `[label, children, line]`)
    that is not a preterminal's only child."""
    label = constituent[0] or "an unlabelled bracket"
    raise TreeSyntaxError(
        f"A word outside a preterminal in {source} at line {line}. "
        f"Received: {word!r} under {label}"
    )


def parse_tree(text: str) -> Tree:
    """The one tree of `text`.

    Args:
        text: str. One tree in Penn Treebank brackets.

    Returns:
        The `Tree`.

    Raises:
        TreeSyntaxError: malformed, or not exactly one tree.
    """
    trees = [tree for _, tree in read_trees(text)]
    if len(trees) != 1:
        raise TreeSyntaxError(
            f"Expected one tree. Received: {len(trees)} trees in {text[:80]!r}"
        )
    return trees[0]


def read_tree_over_words(text: str, words) -> Tree:
    """The tree of `text` (brackets as `str(tree)` writes them) whose leaves
    are `words`, in order: where `parse_tree` reads every bracket as
    structure, a word here may hold brackets (`(x)`), as the words of a
    sentence a parser was given may (`str(tree)` writes them as they are).
    Iterative, for trees of any depth.

    Args:
        text: str. One tree, as `str(tree)` writes it.
        words: sequence of str. The tree's words, in order.

    Returns:
        The `Tree`.

    Raises:
        TreeSyntaxError: `text` is not one tree over exactly `words`.
    """
    stack = [[None, []]]  # [label, children] of each open constituent
    position, index = 0, 0
    while position < len(text):
        if text[position] == " ":
            position += 1
        elif text[position] == "(":
            end = position + 1
            while end < len(text) and text[end] not in " ()":
                end += 1
            label, position = text[position + 1 : end], end
            word = words[index] if index < len(words) else None
            if word is not None and text.startswith(f" {word})", position):
                stack[-1][1].append(Tree(label, (word,)))
                position += len(word) + 2
                index += 1
            else:
                stack.append([label, []])
        elif text[position] == ")" and len(stack) > 1:
            label, children = stack.pop()
            stack[-1][1].append(Tree(label, tuple(children)))
            position += 1
        else:
            break
    if position < len(text) or len(stack) != 1 or len(stack[0][1]) != 1:
        raise TreeSyntaxError(f"Not one tree. Received: text={text!r:.200}")
    if index != len(words):
        raise TreeSyntaxError(
            f"The tree's leaves are not the sentence's {len(words)} words. "
            f"Received: text={text!r:.200}"
        )
    return stack[0][1][0]
