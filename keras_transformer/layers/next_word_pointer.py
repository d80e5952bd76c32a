"""The decoder's view of the next word to parse: a deterministic pointer into
the encoder output (parsing, §6.3; Liu, Zhu & Shi, AAAI 2018)."""

import keras
import numpy as np
from keras import ops

from keras_transformer.layers.word_distance_bias import WordDistanceBias
from keras_transformer.validation import (
    check_non_negative_int,
    check_one_of,
    check_positive_int,
)

# How a word's subword pieces make its vector: its first piece, or the mean
# of all its pieces.
POOLINGS = ("first", "mean")


def check_word_windows(next_word_pointer, next_word_pooling, **windows):
    """Raises a `ValueError` naming the values unless each word-distance
    window (`next_word_window`, `encoder_word_window`: an int >= 0, 0 is off)
    that is on has the pointer with `"mean"` pooling, whose word numbers
    cover every piece. `TransformerConfig` and `Transformer` both check."""
    for name, window in windows.items():
        check_non_negative_int(name, window)
        if window and (not next_word_pointer or next_word_pooling != "mean"):
            raise ValueError(
                f"`{name}` needs `next_word_pointer` with "
                f"`next_word_pooling='mean'`. Received: {name}={window}, "
                f"next_word_pointer={next_word_pointer}, "
                f"next_word_pooling={next_word_pooling!r}"
            )


# Source ids that belong to no word: padding, bos and eos (the ids of
# `keras_transformer.models.special_ids`, not imported: `models` imports this
# module; a test checks that they agree).
NOT_WORD_IDS = (0, 2, 3)


@keras.saving.register_keras_serializable(package="keras_transformer")
class NextWordPointer(keras.layers.Layer):
    """The encoder's representation of the next word, for each decoder input.

    A linearized tree (§6.3, Vinyals et al. 2015) has one word symbol (`XX`,
    or a POS tag) per source word, in order; so after a target prefix with n
    word symbols the next word to cover is word n. Seq2seq parsers that leave
    this to attention place brackets a word or two off; Ma et al. (AAAI 2017)
    and Liu, Zhu & Shi (AAAI 2018) give the decoder, at each step, the
    encoder's representation of that word, selected deterministically. This
    layer does it for a subword source: word n begins at the n-th
    word-initial piece of the source and runs to the next one (or to eos or
    padding); h_n is the encoder output at its first piece (`pooling="first"`)
    or the mean over its pieces (`"mean"`: a word's last pieces carry its
    suffix, "-ing", "-s", which a tagging parser needs;
    docs/experiment-log.md, "The pointer's word vector, and levers after it",
    measures both). The returned vector is `W h_n + b` (`W` and `b`
    learned), zero once every word is covered (or for words cut off with a
    truncated source). The Transformer adds it to the decoder's input
    embeddings. Not in the paper:
    an option of the model (`next_word_pointer`), a stated deviation
    (BUILD_NOTES.md, "Parsing").

    Which source pieces start a word and which target symbols are words is a
    property of the tokenizers, not of the architecture: two non-trainable
    0/1 tables, set once with `set_vocabularies` and saved with the weights
    (every checkpoint and export carries them). They start as zeros, which
    points every step at nothing.

    With `distance_window=W > 0` the layer also biases the decoder's
    cross-attention by where each source piece lies relative to the next
    word (a `WordDistanceBias`): a learned scalar per head and word distance
    d = (the piece's word) - n, clipped to [-W, W], plus one for pieces of
    no word (bos, eos, padding), added to the attention scores
    (`attention_bias`). Ma et al. (AAAI 2017) attend deterministically to a
    window of words around the pointer; this lets each head learn its own
    window (the word before, the next one, the words ahead) while content
    still chooses within it. It needs `pooling="mean"`, whose word numbers
    cover every piece of a word. Initialised at zero, it starts as plain
    attention.

    The teacher-forced call counts the word symbols of the decoder inputs
    with a cumulative sum; incremental decoding keeps the count per row in its
    search state (`next_word_index` with `words_before`) and calls `memory`
    once and `select` (and `attention_bias`) per step: the same arithmetic,
    so cached and uncached decoding agree.

    Args:
        source_vocab_size: int. Source vocabulary size.
        target_vocab_size: int. Target vocabulary size.
        hidden_dim: int. D, the size of the encoder output and of the result.
        pooling: `"first"` or `"mean"`, how a word's pieces make h_n.
            Defaults to `"first"`.
        distance_window: int W >= 0, the word distances of the
            cross-attention bias; 0 (the default) leaves attention alone.
        num_heads: int, the decoder's attention heads; needed with
            `distance_window`.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        target_ids: int tensor `[B, T]`, the decoder inputs (bos first).
        source_ids: int tensor `[B, S]`, 0 for padding.
        encoder_output: tensor `[B, S, D]`.

    Returns:
        A tensor `[B, T, D]`; with `distance_window`, a tuple of it and the
        cross-attention bias `[B, num_heads, T, S]`.

    References:
        - [Ma et al., 2017. Deterministic Attention for Sequence-to-Sequence Constituent
          Parsing](https://doi.org/10.1609/aaai.v31i1.10967), AAAI 2017.
        - [Liu, Zhu & Shi, 2018. Improving Sequence-to-Sequence Constituency Parsing](
          https://doi.org/10.1609/aaai.v32i1.11917), AAAI 2018.
        - [Vinyals et al., 2015. Grammar as a Foreign Language](
          https://arxiv.org/abs/1412.7449) (the linearized trees).
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §6.3.

    Examples:
        >>> pointer = NextWordPointer(10, 6, hidden_dim=4)
        >>> pointer.set_vocabularies(word_start_ids=[4, 5], word_symbol_ids=[4])
        >>> ids = keras.ops.convert_to_tensor([[4, 6, 5, 3]])
        >>> pointer(keras.ops.convert_to_tensor([[2, 4, 5]]), ids,
        ...         keras.ops.zeros((1, 4, 4))).shape
        (1, 3, 4)
    """

    def __init__(
        self,
        source_vocab_size,
        target_vocab_size,
        hidden_dim,
        pooling="first",
        distance_window=0,
        num_heads=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int("source_vocab_size", source_vocab_size)
        check_positive_int("target_vocab_size", target_vocab_size)
        check_positive_int("hidden_dim", hidden_dim)
        check_one_of("pooling", pooling, POOLINGS)
        check_non_negative_int("distance_window", distance_window)
        if distance_window:
            check_positive_int("num_heads", num_heads)
            if pooling != "mean":
                raise ValueError(
                    "`distance_window` needs `pooling='mean'` (word numbers on "
                    f"every piece). Received: pooling={pooling!r}, "
                    f"distance_window={distance_window}"
                )
        self.pooling = pooling
        self.distance_window = distance_window
        self.num_heads = num_heads
        self.source_vocab_size = source_vocab_size
        self.target_vocab_size = target_vocab_size
        self.hidden_dim = hidden_dim

    def build(
        self, target_ids_shape=None, source_ids_shape=None, encoder_output_shape=None
    ):
        # 0/1 tables, float32 under any policy (exact, and averaged
        # checkpoints keep them exact).
        self.word_starts, self.word_symbols = (
            self.add_weight(
                name=name,
                shape=(size,),
                initializer="zeros",
                trainable=False,
                dtype="float32",
            )
            for name, size in (
                ("word_starts", self.source_vocab_size),
                ("word_symbols", self.target_vocab_size),
            )
        )
        self.projection = keras.layers.Dense(
            self.hidden_dim, dtype=self.dtype_policy, name="projection"
        )
        self.projection.build((None, None, self.hidden_dim))
        if self.distance_window:
            self.distance_bias = WordDistanceBias(
                self.distance_window,
                self.num_heads,
                dtype=self.dtype_policy,
                name="distance_bias",
            )
            self.distance_bias.build()
        self.built = True

    def set_vocabularies(self, word_start_ids, word_symbol_ids):
        """Sets the two tables from id lists.

        Args:
            word_start_ids: the source ids whose piece begins a word.
            word_symbol_ids: the target ids of the word symbols.
        """
        if not self.built:
            self.build()
        tables = {
            "word_start_ids": (word_start_ids, self.word_starts),
            "word_symbol_ids": (word_symbol_ids, self.word_symbols),
        }
        values = {}
        for name, (ids, table) in tables.items():
            size = table.shape[0]
            ids = np.asarray(list(ids), dtype=np.int64)
            if ids.size == 0 or ids.min() < 0 or ids.max() >= size:
                raise ValueError(
                    f"`{name}` must be a non-empty list of ids in [0, {size}). "
                    f"Received: {name}={ids.tolist()[:20]}"
                )
            values[name] = np.zeros(size, np.float32)
            values[name][ids] = 1.0
        # Both checked before either is written.
        for name, (_, table) in tables.items():
            table.assign(values[name])

    def word_symbol_counts(self, target_ids):
        """int32 `[B]`: the word symbols in each row of `target_ids` `[B, t]`."""
        is_word = ops.take(self.word_symbols, ops.cast(target_ids, "int32"))
        return ops.sum(ops.cast(is_word > 0.5, "int32"), axis=-1)

    def next_word_index(self, target_ids, words_before=None):
        """int32 `[B, t]`: the word each decoder input points at.

        Position j points at the number of word symbols among the inputs up
        to and including j (plus `words_before`, int `[B]`, the count before
        the chunk): the input at j is the output of step j - 1.
        """
        is_word = ops.take(self.word_symbols, ops.cast(target_ids, "int32"))
        # [B, t]: an inclusive cumulative count
        index = ops.cumsum(ops.cast(is_word > 0.5, "int32"), axis=-1)
        if words_before is not None:
            index = index + ops.expand_dims(ops.cast(words_before, "int32"), -1)
        return index

    def word_numbers(self, source_ids, first_pieces=False):
        """int32 `[B, S]`: the 0-based number of the word each source piece
        is in, -1 for pieces of no word (bos, eos, padding, a continuation
        piece before the first word-initial one); with `first_pieces`, only
        each word's first piece is numbered."""
        if not self.built:
            # The encoder reads the word numbers before the pointer's call.
            self.build()
        source_ids = ops.cast(source_ids, "int32")
        in_word = ops.ones_like(source_ids, dtype="bool")
        for special in NOT_WORD_IDS:
            in_word = ops.logical_and(in_word, ops.not_equal(source_ids, special))
        starts = ops.take(self.word_starts, source_ids) > 0.5
        starts = ops.logical_and(starts, in_word)
        numbers = ops.cumsum(ops.cast(starts, "int32"), axis=-1) - 1
        numbered = starts if first_pieces else in_word
        return ops.where(ops.logical_and(numbered, numbers >= 0), numbers, -1)

    def memory(self, source_ids, encoder_output):
        """`(projected [B, S, D], word_positions [B, S] int32)`: each source
        piece's `W h + b` (with `pooling="mean"` divided by its word's number
        of pieces, once per sentence, so that `select`'s sum is their mean),
        and the number of the word whose vector it makes (its first piece, or
        with `"mean"` each of its pieces), else -1."""
        positions = self.word_numbers(source_ids, first_pieces=self.pooling == "first")
        projected = self.projection(encoder_output)
        if self.pooling == "mean":
            # [B, S, 1] == [B, 1, S] -> [B, S]: the pieces of each piece's word
            same = ops.equal(
                ops.expand_dims(positions, 2), ops.expand_dims(positions, 1)
            )
            count = ops.sum(ops.cast(same, projected.dtype), axis=-1, keepdims=True)
            projected = projected / count  # count >= 1: a piece is in its word
        return projected, positions

    def select(self, memory, word_positions, next_word_index, num_beams=None):
        """The projected encoder output at each row's next word.

        Args:
            memory: tensor `[B, S, D]` from `memory`.
            word_positions: int tensor `[B, S]` from `memory`.
            next_word_index: int tensor `[B, t]`, or `[B*K, t]` with
                `num_beams=K` (the K beam rows of a sentence next to each
                other, over its one memory row).
            num_beams: optional int K.

        Returns:
            A tensor `[B, t, D]` (`[B*K, t, D]`), zero where the index is past
            the last word.
        """
        t = ops.shape(next_word_index)[1]
        index = _fold_index(next_word_index, num_beams)
        # [B, K*t, 1] == [B, 1, S] -> [B, K*t, S]: the pieces of each row's
        # word, summed (pieces of no word hold -1 and match nothing)
        selection = ops.logical_and(
            ops.equal(ops.expand_dims(index, -1), ops.expand_dims(word_positions, 1)),
            ops.expand_dims(word_positions >= 0, 1),
        )
        selection = ops.cast(selection, memory.dtype)
        # [B, K*t, S] x [B, S, D] -> [B, K*t, D] -> [B*K, t, D]
        selected = ops.matmul(selection, memory)
        return ops.reshape(selected, (-1, t, ops.shape(memory)[-1]))

    def attention_bias(self, word_positions, next_word_index, num_beams=None):
        """The cross-attention bias by word distance from each row's next word.

        Args:
            word_positions: int tensor `[B, S]` from `memory`.
            next_word_index: int tensor `[B, t]` (`[B*K, t]` with `num_beams`).
            num_beams: optional int K.

        Returns:
            `None` without `distance_window`; else `[B, H, t, S]`, or with
            `num_beams` `[B, H, K*t, S]` in the order of
            `CachedMultiHeadAttention`'s `attention_bias` (beam k's position j
            in row `k*t + j`).
        """
        if not self.distance_window:
            return None
        index = _fold_index(next_word_index, num_beams)
        return self.distance_bias(index, word_positions)

    def call(self, target_ids, source_ids, encoder_output):
        memory, positions = self.memory(source_ids, encoder_output)
        index = self.next_word_index(target_ids)
        selected = self.select(memory, positions, index)
        if not self.distance_window:
            return selected
        return selected, self.attention_bias(positions, index)

    def compute_output_shape(
        self, target_ids_shape, source_ids_shape, encoder_output_shape
    ):
        selected = (*target_ids_shape, self.hidden_dim)
        if not self.distance_window:
            return selected
        batch, length = target_ids_shape
        return selected, (batch, self.num_heads, length, source_ids_shape[1])

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "source_vocab_size": self.source_vocab_size,
                "target_vocab_size": self.target_vocab_size,
                "hidden_dim": self.hidden_dim,
                "pooling": self.pooling,
                "distance_window": self.distance_window,
                "num_heads": self.num_heads,
            }
        )
        return config


def _fold_index(next_word_index, num_beams):
    """int32 `[B*K, t]` -> `[B, K*t]`: the K beam rows of a sentence side by
    side, over its one memory row (K = `num_beams`, or 1)."""
    k = num_beams or 1
    t = ops.shape(next_word_index)[1]
    return ops.reshape(ops.cast(next_word_index, "int32"), (-1, k * t))
