"""Constituency trees as symbol sequences, for parsing as translation (§6.3).

The paper's English constituency parser (§6.3) follows Vinyals et al. (2015),
"Grammar as a Foreign Language": the source is the sentence's words and the
target is the tree written depth-first as labelled opening and closing
brackets, with one `XX` per word. For "John has a dog ." under
`(TOP (S (NP (NNP John)) (VP (VBZ has) (NP (DT a) (NN dog))) (. .)))`:

    source: John has a dog .
    target: (S (NP XX )NP (VP XX (NP XX XX )NP )VP XX )S

With `tags=True` each word's part-of-speech tag replaces its `XX`
(`(S (NP NNP )NP (VP VBZ (NP DT NN )NP )VP . )S`). The target vocabulary is
these symbols as whole tokens (`target_symbols`), never split into subwords;
the source goes through the subword tokenizer like any other text. Words are
never generated: `delinearize` copies them from the input, so its output is
a tree over exactly the input words.

Conventions (deviations from Vinyals et al. are marked):

- **The root is not in the sequence** (deviation: Vinyals et al. include the
  top constituent). Normalised trees all have the root `TOP`, so
  `(TOP ... )TOP` would spend two target symbols per sentence on a constant.
  `linearize` writes the root's children, any number of them, and
  `delinearize` puts everything under a new root labelled `TOP`
  (`ROOT_LABEL`), whatever the input tree's root was called.
- **Preterminals become leaves**: one `XX` (`PLACEHOLDER`) per word, or with
  `tags=True` the tag itself. Unary chains (`(S (VP XX )VP )S`) are kept.
- **With `XX` leaves the tags are lost**: the preterminals `delinearize`
  builds are labelled `XX`, a placeholder; a scorer puts the gold tags back
  with `retag` (EVALB scores brackets, not tags).

De-linearization never fails: it repairs whatever the decoder emits, and
counts each repair in `RepairCounts`:

>>> tree, repairs = delinearize("(S (NP XX )VP XX".split(), ("I", "ran", "."))
>>> str(tree)
'(TOP (S (NP (XX I)) (XX ran)) (XX .))'
>>> str(repairs)
'3 repairs (unopened_closes=0, mismatched_closes=1, unclosed_opens=1, \
missing_leaves=1, extra_leaves=0, unknown_symbols=0, empty_constituents=0)'
"""

import dataclasses
import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

from pipelines.tokenizers.special_tokens import RESERVED_PIECES
from pipelines.trees.tree import ROOT_LABEL, Tree

PLACEHOLDER = "XX"  # a word's leaf symbol, and its tag in the trees built back

# A constituent label or a tag: one token of Penn Treebank brackets.
_LABEL = re.compile(r"[^\s()]+")


@dataclasses.dataclass(frozen=True)
class RepairCounts:
    """How many repairs `delinearize` made, by kind.

    One symbol can need two repairs: a bracket still open at the end that
    holds no word is both an unclosed open and an empty constituent. Sum the
    counts of a corpus with `+` or `sum(...)`.

    Examples:
        >>> sum([RepairCounts(extra_leaves=1), RepairCounts(extra_leaves=2)]).total
        3
    """

    unopened_closes: int = 0  # `)X` with no bracket open: dropped
    mismatched_closes: int = 0  # `)X` while `(Y` is innermost: closes `(Y`
    unclosed_opens: int = 0  # `(X` still open at the end: closed there
    missing_leaves: int = 0  # words left over after the last leaf: under the root
    extra_leaves: int = 0  # a leaf after the last word: dropped
    unknown_symbols: int = 0  # not a bracket, `XX` or tag: dropped
    empty_constituents: int = 0  # a bracket closed around no word: dropped

    @property
    def total(self) -> int:
        """All repairs together; 0 for a valid sequence."""
        return sum(dataclasses.astuple(self))

    def __add__(self, other: "RepairCounts") -> "RepairCounts":
        if not isinstance(other, RepairCounts):
            return NotImplemented
        return RepairCounts(
            **{
                field.name: getattr(self, field.name) + getattr(other, field.name)
                for field in dataclasses.fields(self)
            }
        )

    def __radd__(self, other):
        # `sum(counts)` starts from 0.
        if other == 0:
            return self
        return NotImplemented

    def __str__(self) -> str:
        fields = ", ".join(
            f"{field.name}={getattr(self, field.name)}"
            for field in dataclasses.fields(self)
        )
        noun = "repair" if self.total == 1 else "repairs"
        return f"{self.total} {noun} ({fields})"


def linearize(
    tree: Tree, tags: bool = False
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The source words and target symbols of `tree` (§6.3, after Vinyals et
    al. 2015).

    The root's own label is not written (see the module docstring): a
    sentence of n words and c constituents below the root takes n + 2c
    symbols.

    Args:
        tree: Tree. A parse; its root's children are written, its root's
            label is not.
        tags: bool. Whether a word's leaf symbol is its part-of-speech tag
            rather than `XX`. Defaults to `False`.

    Returns:
        `(words, symbols)`, two tuples of strings.

    Raises:
        ValueError: the root is a preterminal, or below the root a
            constituent has no children, mixes words with constituents, or
            has a label that is empty or holds whitespace or brackets (with
            `tags=True` tags are checked too, and may not be a tokenizer's
            reserved piece such as `<unk>`).

    References:
        - [Vinyals et al., 2015. Grammar as a Foreign Language](
          https://arxiv.org/abs/1412.7449).
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §6.3.

    Examples:
        >>> from pipelines.trees.tree import parse_tree
        >>> linearize(parse_tree("(TOP (S (NP (PRP I)) (VP (VBD ran))))"))
        (('I', 'ran'), ('(S', '(NP', 'XX', ')NP', '(VP', 'XX', ')VP', ')S'))
    """
    if tree.is_preterminal:
        raise ValueError(
            "Cannot linearize a tree whose root is a preterminal: the root's "
            f"label is not part of the sequence. Received: {tree}"
        )
    words, symbols = [], []
    for child in tree.children:
        _write(child, tags, words, symbols)
    return tuple(words), tuple(symbols)


def _write(tree, tags, words, symbols):
    if not isinstance(tree, Tree):
        raise ValueError(
            f"A word outside a preterminal cannot be linearized. Received: {tree!r}"
        )
    if tree.is_preterminal:
        if tags and not _is_tag(tree.label):
            raise ValueError(
                "Expected a tag without whitespace or brackets that is not a "
                f"reserved piece. Received: {tree.label!r} over {tree.children[0]!r}"
            )
        words.append(tree.children[0])
        symbols.append(tree.label if tags else PLACEHOLDER)
        return
    if not tree.children or not _LABEL.fullmatch(tree.label):
        raise ValueError(
            "Expected a constituent with children and a label without "
            f"whitespace or brackets. Received: {tree}"
        )
    symbols.append("(" + tree.label)
    for child in tree.children:
        _write(child, tags, words, symbols)
    symbols.append(")" + tree.label)


def _is_tag(symbol):
    return bool(_LABEL.fullmatch(symbol)) and symbol not in RESERVED_PIECES


def symbol_classes(
    vocabulary: Sequence[str], tags: bool = False
) -> tuple[list[int], list[int], list[int]]:
    """The ids of the leaf, opening and closing symbols of a target
    vocabulary, classified as `delinearize` reads them.

    Args:
        vocabulary: sequence of str, the pieces in id order (for example
            `SymbolTokenizer.vocabulary`, the special pieces first).
        tags: bool. Whether a tag is a leaf symbol, as for `delinearize`.

    Returns:
        `(leaf_ids, open_ids, close_ids)`, each a sorted list of int; ids of
        other pieces (the special pieces, unknown symbols) are in none.

    Examples:
        >>> symbol_classes(["<pad>", "<unk>", "<s>", "</s>", "(NP", ")NP", "XX"])
        ([6], [4], [5])
    """
    leaves, opens, closes = [], [], []
    for index, symbol in enumerate(vocabulary):
        if symbol[:1] == "(" and _LABEL.fullmatch(symbol, 1):
            opens.append(index)
        elif symbol[:1] == ")" and _LABEL.fullmatch(symbol, 1):
            closes.append(index)
        elif symbol == PLACEHOLDER or (tags and _is_tag(symbol)):
            leaves.append(index)
    return leaves, opens, closes


def delinearize(
    symbols: Sequence[str] | str,
    words: Sequence[str] | str,
    tags: bool = False,
    *,
    vocabulary: Collection[str] | None = None,
) -> tuple[Tree, RepairCounts]:
    """The tree that `symbols` describes over `words`, repaired if need be.

    Never fails on `symbols`: whatever the decoder emitted, the result is a
    well-formed tree rooted at `TOP` whose words are exactly `words`, in
    order, and every constituent below the root holds at least one word.
    The repairs, each counted in the returned `RepairCounts`:

    - a close with nothing open is dropped (`unopened_closes`);
    - a close whose label is not the innermost open bracket's closes the
      innermost open bracket, which keeps its own label
      (`mismatched_closes`);
    - brackets still open at the end are closed (`unclosed_opens`);
    - too few leaves: the words left over become children of the root,
      after everything else (`missing_leaves`, one per word);
    - too many leaves: the leaves after the last word are dropped
      (`extra_leaves`);
    - a symbol that is not `(LABEL`, `)LABEL`, `XX` or (with `tags=True`) a
      tag, for example `<unk>`, `(` or an empty string, is dropped
      (`unknown_symbols`);
    - a bracket closed around no word is dropped (`empty_constituents`).

    Preterminals are labelled `XX` (a placeholder, to be replaced by gold
    tags with `retag`) unless `tags=True`, where a leaf's symbol is its tag;
    words attached to the root by a repair are tagged `XX` either way.

    Args:
        symbols: sequence of str, or one str of whitespace-separated symbols.
            The target side, as `linearize` writes it (without the root).
        words: sequence of str, or one str of whitespace-separated words. The
            source words, copied into the tree.
        tags: bool. Whether a symbol that is not a bracket is a tag (a leaf
            labelled with it); otherwise only `XX` is a leaf. Defaults to
            `False`.
        vocabulary: collection of str, or `None`. When given, a symbol not in
            it is unknown too, for example the target vocabulary from
            `target_symbols`. Defaults to `None`: any well-formed symbol.

    Returns:
        `(tree, repairs)`: a `Tree` labelled `TOP` (`Tree("TOP", ())`,
        printed `(TOP )`, when `words` is empty) and a `RepairCounts`.

    Raises:
        TypeError: a word is not a `str`.

    References:
        - [Vinyals et al., 2015. Grammar as a Foreign Language](
          https://arxiv.org/abs/1412.7449).
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §6.3.

    Examples:
        >>> tree, repairs = delinearize("(S (NP XX )NP (VP XX )VP )S", "I ran")
        >>> str(tree), repairs.total
        ('(TOP (S (NP (XX I)) (VP (XX ran))))', 0)
    """
    if isinstance(symbols, str):
        symbols = symbols.split()
    words = tuple(words.split() if isinstance(words, str) else words)
    for word in words:
        if not isinstance(word, str):
            raise TypeError(f"Expected words of type str. Received: {word!r}")
    repairs = Counter()
    stack = [[ROOT_LABEL, []]]  # [label, children] of the open constituents
    position = 0  # index of the next word to attach
    for symbol in symbols:
        if (
            not isinstance(symbol, str)
            or not symbol
            or (vocabulary is not None and symbol not in vocabulary)
        ):
            repairs["unknown_symbols"] += 1
        elif symbol[0] == "(" and _LABEL.fullmatch(symbol, 1):
            stack.append([symbol[1:], []])
        elif symbol[0] == ")" and _LABEL.fullmatch(symbol, 1):
            if len(stack) == 1:
                repairs["unopened_closes"] += 1
                continue
            if stack[-1][0] != symbol[1:]:
                repairs["mismatched_closes"] += 1
            _close(stack, repairs)
        elif symbol == PLACEHOLDER or (tags and _is_tag(symbol)):
            if position == len(words):
                repairs["extra_leaves"] += 1
                continue
            stack[-1][1].append(Tree(symbol, (words[position],)))
            position += 1
        else:
            repairs["unknown_symbols"] += 1
    while len(stack) > 1:
        repairs["unclosed_opens"] += 1
        _close(stack, repairs)
    root = stack[0][1]
    for word in words[position:]:
        repairs["missing_leaves"] += 1
        root.append(Tree(PLACEHOLDER, (word,)))
    return Tree(ROOT_LABEL, tuple(root)), RepairCounts(**repairs)


def _close(stack, repairs):
    label, children = stack.pop()
    if children:
        stack[-1][1].append(Tree(label, tuple(children)))
    else:
        repairs["empty_constituents"] += 1


def retag(tree: Tree, tags: Sequence[str]) -> Tree:
    """`tree` with its preterminals relabelled `tags`, left to right: gold
    tags on a tree that `delinearize` built with `XX` placeholders.

    Args:
        tree: Tree. A parse.
        tags: sequence of str. One tag per word.

    Returns:
        A new `Tree`, with the same brackets and words.

    Raises:
        ValueError: not one tag per word.

    Examples:
        >>> tree, _ = delinearize("(NP XX XX )NP", "the cat")
        >>> str(retag(tree, ("DT", "NN")))
        '(TOP (NP (DT the) (NN cat)))'
    """
    tags = tuple(tags)
    if len(tags) != len(tree.words()):
        raise ValueError(
            f"Expected one tag per word: {len(tree.words())} words. "
            f"Received: {len(tags)} tags"
        )
    remaining = iter(tags)
    # Post-order with an explicit stack, not recursion: a decoder's output
    # can nest deeper than Python's recursion limit. `built` holds the
    # finished subtrees; a node is rebuilt once its children are.
    built, pending = [], [(tree, False)]
    while pending:
        node, children_done = pending.pop()
        if node.is_preterminal:
            built.append(Tree(next(remaining), node.children))
        elif children_done:
            count = len(node.children)
            children = tuple(built[len(built) - count :]) if count else ()
            del built[len(built) - count :]
            built.append(Tree(node.label, children))
        else:
            pending.append((node, True))
            pending.extend((child, False) for child in reversed(node.children))
    return built[0]


def target_symbols(trees: Iterable[Tree], tags: bool = False) -> tuple[str, ...]:
    """The target vocabulary of a corpus: every symbol `linearize` writes for
    `trees`, once each, sorted (Python's string order, so the same corpus
    always gives the same tuple).

    Each symbol is one whole token of the target vocabulary (§6.3), never
    split into subwords.

    Args:
        trees: iterable of Tree. The corpus, for example a training split.
        tags: bool. As for `linearize`. Defaults to `False`.

    Returns:
        A tuple of distinct strings, sorted.

    Examples:
        >>> from pipelines.trees.tree import parse_tree
        >>> target_symbols([parse_tree("(TOP (S (NP (PRP I)) (VP (VBD ran))))")])
        ('(NP', '(S', '(VP', ')NP', ')S', ')VP', 'XX')
    """
    symbols = set()
    for tree in trees:
        symbols.update(linearize(tree, tags)[1])
    return tuple(sorted(symbols))
