"""Whole-token symbols: the target vocabulary of parsing (§6.3).

§6.3 follows Vinyals et al. (2015), "Grammar as a Foreign Language": the
target is a linearized tree (`tree_linearization.linearize`), a sequence of
bracket and tag symbols such as `(S`, `(NP`, `XX`, `)NP`, `)S`. Each symbol is
one whole token, never split into subwords; the source side keeps the subword
tokenizer. Words are never generated (`delinearize` copies them from the
input), so the target vocabulary is small: the symbols a corpus uses
(`target_symbols`) after the four special pieces.

In the graph, text is split on whitespace (`tf.strings.split`) and each
symbol is looked up in a `tf.lookup.StaticHashTable`; a symbol outside the
vocabulary becomes unk. Detokenization joins the symbols with single spaces,
so `detokenize(tokenize(x)) == x` for every `x` of in-vocabulary symbols
separated by single spaces (no leading or trailing space). The table is a
tracked resource of this `tf.Module`, so the tokenizer saves inside a
SavedModel.
"""

from collections.abc import Iterable, Sequence

import tensorflow as tf

from pipelines.tokenizers.special_tokens import (
    BOS_ID,
    EOS_ID,
    NUM_RESERVED,
    PAD_ID,
    RESERVED_PIECES,
    UNK_ID,
)
from pipelines.tokenizers.subword_tokenizer import SubwordTokenizer


def _vocabulary_payload(vocabulary: Sequence[str]) -> bytes:
    """The artefact payload: every piece in id order, newline-joined UTF-8."""
    return "\n".join(vocabulary).encode("utf-8")


class SymbolTokenizer(SubwordTokenizer):
    """A whole-token symbol vocabulary as a `tf.Module`: strings <-> int32 ids.

    The target tokenizer of parsing (§6.3; Vinyals et al., 2015): one id per
    whitespace-separated symbol, no subwords. Pass it as `target_tokenizer`
    to `transforms.tokenize_pairs`; the source keeps a subword tokenizer.
    Ids 0-3 are pad, unk, bos, eos (`pipelines.tokenizers.special_tokens`) and the
    symbols follow from id 4 in the given order. Does not add bos/eos: the
    pipeline does. Saving, loading and the fingerprint are `SubwordTokenizer`'s;
    the payload is the whole vocabulary, special pieces included, as
    newline-joined UTF-8 (the WordPiece payload's layout).

    Args:
        symbols: sequence of str. The symbols in id order (ids 4, 5, ...),
            without the special pieces: distinct, non-empty, without
            whitespace. `train` sorts them; this constructor keeps the order.
        name: str. Module name. Defaults to `"symbol_tokenizer"`.

    References:
        - [Vinyals et al., 2015. Grammar as a Foreign Language](
          https://arxiv.org/abs/1412.7449).
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §6.3.

    Examples:
        >>> tokenizer = SymbolTokenizer(["(NP", "(S", ")NP", ")S", "XX"])
        >>> ids = tokenizer.tokenize(["(S (NP XX )NP )S"])  # [[5, 4, 8, 6, 7]]
        >>> tokenizer.detokenize(ids)                        # [b"(S (NP XX )NP )S"]
    """

    kind = "symbols"
    # No default size: `train` without `vocab_size` keeps every symbol. The
    # paper gives none for §6.3, and a target vocabulary must not drop any.
    default_vocab_size = None

    def __init__(self, symbols: Sequence[str], name: str = "symbol_tokenizer"):
        if isinstance(symbols, str | bytes):
            raise ValueError(
                "symbols must be a sequence of str, not one string. "
                f"Received: symbols={symbols!r}"
            )
        symbols = list(symbols)
        bad = [
            s
            for s in symbols
            if not isinstance(s, str) or not s or len(s.split()) != 1 or s != s.strip()
        ]
        if bad:
            raise ValueError(
                "Symbols must be non-empty strings without whitespace. "
                f"Received: {bad[:5]!r}"
            )
        reserved = [s for s in symbols if s in RESERVED_PIECES]
        if reserved:
            raise ValueError(
                f"Symbols must not include the special pieces {list(RESERVED_PIECES)}"
                f" (they always have ids 0-3). Received: {reserved!r}"
            )
        if len(set(symbols)) != len(symbols):
            raise ValueError(
                "Symbols must be distinct. "
                f"Received: {len(symbols)} symbols, {len(set(symbols))} distinct"
            )
        vocabulary = list(RESERVED_PIECES) + symbols
        super().__init__(_vocabulary_payload(vocabulary), len(vocabulary), name=name)
        self._vocabulary = vocabulary
        self._pieces = tf.constant(vocabulary, tf.string)  # [V]
        self._table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                keys=tf.constant(vocabulary, tf.string),
                values=tf.range(len(vocabulary), dtype=tf.int64),
            ),
            default_value=UNK_ID,
        )

    @classmethod
    def train(
        cls, texts: Iterable[str], vocab_size: int | None = None, **options
    ) -> "SymbolTokenizer":
        """Collects the vocabulary of `texts`: every symbol, sorted.

        Unlike the subword kinds, `vocab_size` is only an upper bound: the
        vocabulary is exactly the special pieces plus every distinct
        whitespace-separated symbol of `texts`, and a `vocab_size` too small
        for them is an error, never a silent drop (a dropped symbol could
        never be decoded).

        Args:
            texts: iterable of str. Target texts, for example the linearized
                trees of the training split (`tree_linearization.linearize`).
            vocab_size: int or `None`. Most ids allowed, special ids
                included; `None` allows any number. Defaults to `None`.
            **options: none; accepted for the base class's interface.

        Returns:
            A `SymbolTokenizer`.
        """
        if vocab_size is None and cls.default_vocab_size is None:
            return cls.from_payload(cls._train_payload(texts, None, **options))
        return super().train(texts, vocab_size, **options)

    @classmethod
    def _train_payload(cls, texts: Iterable[str], vocab_size: int | None) -> bytes:
        """The special pieces, then the distinct symbols of `texts`, sorted.

        Python's string order, as `target_symbols`, so equal texts give equal
        fingerprints. Special pieces met in `texts` keep their ids 0-3.
        """
        if isinstance(texts, str | bytes):
            raise ValueError(
                "texts must be an iterable of str, not one string. "
                f"Received: texts={texts[:50]!r}"
            )
        found = set()
        for text in texts:
            found.update(text.split())
        symbols = sorted(found.difference(RESERVED_PIECES))
        needed = NUM_RESERVED + len(symbols)
        if vocab_size is not None and needed > vocab_size:
            raise ValueError(
                f"The texts have {len(symbols)} distinct symbols, which need "
                f"{needed} ids with the {NUM_RESERVED} special ones; a symbol "
                f"vocabulary never drops symbols. Received: vocab_size={vocab_size}"
            )
        return _vocabulary_payload(list(RESERVED_PIECES) + symbols)

    @classmethod
    def from_payload(cls, payload: bytes) -> "SymbolTokenizer":
        """Builds the tokenizer from its newline-joined UTF-8 vocabulary."""
        vocabulary = payload.decode("utf-8").split("\n")
        if tuple(vocabulary[:NUM_RESERVED]) != RESERVED_PIECES:
            raise ValueError(
                f"A symbol vocabulary must start with {list(RESERVED_PIECES)}. "
                f"Received: {vocabulary[:NUM_RESERVED]}"
            )
        return cls(vocabulary[NUM_RESERVED:])

    @property
    def symbols(self) -> list[str]:
        """The symbols in id order (ids 4, 5, ...), without the special pieces."""
        return self._vocabulary[NUM_RESERVED:]

    @property
    def vocabulary(self) -> list[str]:
        """Every piece in id order, the special pieces first."""
        return list(self._vocabulary)

    def tokenize(self, strings: tf.Tensor) -> tf.RaggedTensor:
        """`tf.string` [B] (or scalar) -> int32 ids [B, (N)] (or [N]).

        Symbols outside the vocabulary become `UNK_ID`.
        """
        symbols = tf.strings.split(tf.convert_to_tensor(strings, tf.string))
        if isinstance(symbols, tf.RaggedTensor):  # [B, (N)]
            ids = tf.ragged.map_flat_values(self._table.lookup, symbols)
        else:  # a scalar string: [N]
            ids = self._table.lookup(symbols)
        return tf.cast(ids, tf.int32)

    def detokenize(self, ids) -> tf.Tensor:
        """int ids [B, (N)] or padded [B, N] -> `tf.string` [B].

        Pad, bos and eos ids are dropped, as the subword kinds do; unk comes
        back as `<unk>`, and so does an id outside `[0, vocab_size)` (a model
        whose output layer is larger than this vocabulary cannot make the
        exported graph fail).
        """
        ids = self._ragged_ids(ids)
        keep = (ids != PAD_ID) & (ids != BOS_ID) & (ids != EOS_ID)
        if isinstance(ids, tf.RaggedTensor):
            ids = tf.ragged.boolean_mask(ids, keep)  # [B, (N)]
        else:
            ids = tf.boolean_mask(ids, keep)  # [N]
        return tf.strings.reduce_join(self.id_to_piece(ids), axis=-1, separator=" ")

    def id_to_piece(self, ids: tf.Tensor) -> tf.Tensor:
        """int ids -> their pieces as `tf.string`; out-of-range ids -> `<unk>`."""
        if isinstance(ids, tf.RaggedTensor):
            return tf.ragged.map_flat_values(self.id_to_piece, ids)
        ids = tf.cast(tf.convert_to_tensor(ids), tf.int32)
        ids = tf.where((ids >= 0) & (ids < self._vocab_size), ids, UNK_ID)
        return tf.gather(self._pieces, ids)
