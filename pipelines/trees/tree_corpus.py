"""Trees as a parallel corpus (§6.3): each tree becomes the pair (its words,
its linearization), streamed with `ParallelCorpus`'s interface, so that
parsing data goes through the same preparation as translation data
(`decode_pairs`, `write_token_shard` with a whole-token target tokenizer).

>>> from pipelines.trees.tree import parse_tree
>>> corpus = TreeCorpus([parse_tree("(TOP (S (NP (NN Dogs)) (VP (VBP bark))))")], "x")
>>> [(s.decode(), t.decode()) for _, s, t in corpus.raw_pairs()]
[('Dogs bark', '(S (NP XX )NP (VP XX )VP )S')]
>>> corpus.origin(1)
'x tree 1'
"""

from collections.abc import Iterable, Iterator

from pipelines.trees.tree import Tree
from pipelines.trees.tree_linearization import linearize


class TreeCorpus:
    """Normalised trees as `(words, symbols)` pairs, space-separated.

    Args:
        trees: iterable of `Tree` (normalised: root `TOP`), read once per
            pass; give a list (or a re-iterable) to read it more than once.
        name: str. Named in messages, e.g. `"GUM train"`.
        tags: bool. Linearize with the POS tags instead of `XX`.
    """

    def __init__(self, trees: Iterable[Tree], name: str, tags: bool = False):
        self.trees = trees
        self.name = name
        self.tags = tags

    def scan(self) -> list:
        """Nothing to check before reading (the treebank reader checked the
        files); the interface of `ParallelCorpus.scan`."""
        return []

    def raw_pairs(self) -> Iterator[tuple[int, bytes, bytes]]:
        """Yields `(tree number, words, symbols)` as UTF-8 bytes."""
        for number, tree in enumerate(self.trees, start=1):
            words, symbols = linearize(tree, tags=self.tags)
            yield number, " ".join(words).encode(), " ".join(symbols).encode()

    def origin(self, line_id: int) -> str:
        return f"{self.name} tree {line_id}"
