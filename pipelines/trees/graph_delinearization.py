"""De-linearization of §6.3 parses as TensorFlow graph ops, for the SavedModel.

The paper's parser (§6.3, after Vinyals et al. (2015), "Grammar as a Foreign
Language") emits a tree as bracket symbols with one `XX` (or tag) per word.
`pipelines.trees.tree_linearization.delinearize` turns such a sequence back into a
tree in Python; an exported model served by TF Serving runs TensorFlow ops
only, so `delinearize_graph` does the same with graph ops and returns exactly
`str(delinearize(symbols, words, tags)[0])` and the `RepairCounts` fields, for
a batch.

The scheme, for a batch padded to S symbols and W words:

1. Every symbol is classified at once (open `(X`, close `)X`, leaf, unknown)
   with the regular expressions of the Python path.
2. One `tf.while_loop` over the S positions, batched over sentences, keeps a
   stack of open-bracket positions: it pairs each close with the bracket it
   closes (the innermost open one, whatever its label) or marks it unopened.
   This is the only sequential part.
3. The rest is vectorised: leaf k takes word k when k < W (extra leaves are
   dropped); a bracket is kept when a kept leaf lies between it and its
   close (the Python path drops it otherwise); the kept pieces are joined,
   then the closes of brackets still open at the end, the words left over
   under the root, and the root's own close.

Deviation from the Python path: there is no `vocabulary` argument; a graph
caller that needs one maps symbols outside it to `""` (an unknown symbol)
before the call.
"""

import dataclasses

import tensorflow as tf

from pipelines.tokenizers.special_tokens import RESERVED_PIECES
from pipelines.trees.tree import ROOT_LABEL
from pipelines.trees.tree_linearization import PLACEHOLDER, RepairCounts

# The `RepairCounts` fields, in dataclass order: the columns of `repairs`.
REPAIR_FIELDS = tuple(field.name for field in dataclasses.fields(RepairCounts))

# Python's `\s` on `str` (Unicode whitespace), spelt out for RE2, whose `\s`
# is ASCII only; a label is one or more characters outside it and `()`.
_WHITESPACE = (
    r"\x{9}-\x{d}\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}"
    r"\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}"
)
_LABEL = f"[^{_WHITESPACE}()]+"

# Symbol kinds; `_PAD` marks the padding after a sequence's last symbol.
_UNKNOWN, _OPEN, _CLOSE, _LEAF, _PAD = 0, 1, 2, 3, 4


def delinearize_graph(
    symbols: tf.RaggedTensor, words: tf.RaggedTensor, tags: bool = False
) -> tuple[tf.Tensor, tf.Tensor]:
    """Trees in Penn Treebank brackets from symbol sequences, in graph ops.

    The graph twin of `pipelines.trees.tree_linearization.delinearize` (§6.3,
    Vinyals et al. 2015): for every sentence it gives the same string as
    `str(delinearize(symbols, words, tags)[0])`, with the same repairs of
    invalid decoder output (see that function), counted the same way. It
    uses TensorFlow ops only (no `tf.py_function`), so it traces under
    `tf.function(input_signature=...)`, saves in a SavedModel and runs in TF
    Serving. Padded inputs convert with
    `tf.RaggedTensor.from_tensor(padded, lengths=lengths)`.

    There is no `vocabulary` argument: map symbols outside the vocabulary to
    `""` first, which counts them as unknown as the Python path would.

    Args:
        symbols: tf.string `RaggedTensor` of shape [B, (S)]. The target side
            of each sentence, as `linearize` writes it (without the root).
        words: tf.string `RaggedTensor` of shape [B, (W)]. The source words,
            copied into the trees.
        tags: bool. Whether a symbol that is not a bracket is a tag (a leaf
            labelled with it); otherwise only `XX` is a leaf. Defaults to
            `False`.

    Returns:
        `(trees, repairs)`: a tf.string tensor of shape [B], one bracketed
        tree rooted at `TOP` per sentence (`(TOP )` with no words), and an
        int32 tensor of shape [B, 7], the repair counts in the order of the
        `RepairCounts` fields (`REPAIR_FIELDS`).

    References:
        - [Vinyals et al., 2015. Grammar as a Foreign Language](
          https://arxiv.org/abs/1412.7449).
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §6.3.

    Examples:
        >>> trees, repairs = delinearize_graph(
        ...     tf.ragged.constant([["(S", "(NP", "XX", ")VP", "XX"]]),
        ...     tf.ragged.constant([["I", "ran", "."]]),
        ... )
        >>> trees.numpy()[0].decode()
        '(TOP (S (NP (XX I)) (XX ran)) (XX .))'
        >>> repairs.numpy()[0].tolist()
        [0, 1, 1, 1, 0, 0, 0]
    """
    symbols = _as_ragged(symbols, "symbols")
    words = _as_ragged(words, "words")
    padded = symbols.to_tensor(default_value="")  # [B, S]
    in_sequence = tf.sequence_mask(symbols.row_lengths(), tf.shape(padded)[1])  # [B, S]
    kinds = _kinds(padded, in_sequence, tags)  # [B, S]
    lengths = tf.strings.length(padded)  # [B, S], in bytes
    labels = tf.strings.substr(
        padded, tf.minimum(lengths, 1), tf.maximum(lengths - 1, 0)
    )  # [B, S]: X of `(X` and `)X` (a one-byte bracket, then the rest)
    openers, closers = _pair_brackets(kinds)  # [B, S] each
    is_open, is_close = kinds == _OPEN, kinds == _CLOSE
    is_leaf = kinds == _LEAF
    closed = is_close & (openers >= 0)  # [B, S]: closes an open bracket
    unclosed = is_open & (closers < 0)  # [B, S]: still open at the end

    # Leaf k takes word k; the leaves after the last word are dropped.
    num_words = tf.cast(words.row_lengths(), tf.int32)  # [B]
    leaf_rank = tf.cumsum(tf.cast(is_leaf, tf.int32), axis=1, exclusive=True)
    kept_leaf = is_leaf & (leaf_rank < num_words[:, None])  # [B, S]
    kept_before = tf.cumsum(tf.cast(kept_leaf, tf.int32), axis=1, exclusive=True)
    num_kept = tf.reduce_sum(tf.cast(kept_leaf, tf.int32), axis=1)  # [B]

    # A bracket holds a word iff a kept leaf lies between it and its close
    # (the end of the sequence for an unclosed one): leaves attach to the
    # innermost open bracket, and non-empty brackets to their parent.
    kept_until = tf.concat([kept_before, num_kept[:, None]], axis=1)  # [B, S+1]
    end = tf.where(closers >= 0, closers, tf.shape(padded)[1])  # [B, S]
    kept_open = is_open & (
        tf.gather(kept_until, end, batch_dims=1) > kept_before
    )  # [B, S]
    safe_openers = tf.maximum(openers, 0)
    kept_close = closed & tf.gather(kept_open, safe_openers, batch_dims=1)
    mismatched = closed & (tf.gather(labels, safe_openers, batch_dims=1) != labels)

    # Pieces of `str(Tree)`: " (X" per kept bracket, " (T w)" per kept leaf,
    # ")" per kept close.
    word_table = tf.concat(
        [words.to_tensor(default_value=""), tf.fill([tf.shape(padded)[0], 1], "")],
        axis=1,
    )  # [B, W+1]: a spare column, so gathers work when W = 0
    leaf_words = tf.gather(
        word_table, tf.minimum(leaf_rank, tf.shape(word_table)[1] - 1), batch_dims=1
    )  # [B, S]
    leaf_tags = padded if tags else tf.fill(tf.shape(padded), PLACEHOLDER)
    pieces = tf.where(kept_open, " (" + labels, "")
    pieces = tf.where(kept_leaf, " (" + leaf_tags + " " + leaf_words + ")", pieces)
    pieces = tf.where(kept_close, ")", pieces)  # [B, S]
    late_closes = tf.where(unclosed & kept_open, ")", "")  # [B, S]
    word_index = tf.range(tf.shape(word_table)[1])[None, :]  # [1, W+1]
    left_over = (word_index >= num_kept[:, None]) & (
        word_index < num_words[:, None]
    )  # [B, W+1]: words under the root
    root_words = tf.where(left_over, f" ({PLACEHOLDER} " + word_table + ")", "")
    trees = tf.strings.join(
        [
            "(" + ROOT_LABEL,
            tf.strings.reduce_join(pieces, axis=1),
            tf.strings.reduce_join(late_closes, axis=1),
            tf.strings.reduce_join(root_words, axis=1),
            ")",
        ]
    )  # [B]
    trees = tf.where(num_words > 0, trees, f"({ROOT_LABEL} )")

    def count(mask):
        return tf.reduce_sum(tf.cast(mask, tf.int32), axis=1)  # [B]

    counts = {
        "unopened_closes": count(is_close & (openers < 0)),
        "mismatched_closes": count(mismatched),
        "unclosed_opens": count(unclosed),
        "missing_leaves": num_words - num_kept,
        "extra_leaves": count(is_leaf & ~kept_leaf),
        "unknown_symbols": count(kinds == _UNKNOWN),
        "empty_constituents": count(is_open & ~kept_open),
    }
    repairs = tf.stack([counts[name] for name in REPAIR_FIELDS], axis=1)  # [B, 7]
    return trees, repairs


def _as_ragged(values, name):
    if isinstance(values, tf.RaggedTensor):
        ragged = values
    elif isinstance(values, tf.Tensor):
        ragged = tf.RaggedTensor.from_tensor(values)
    else:
        ragged = tf.ragged.constant(values, dtype=tf.string, ragged_rank=1)
    if ragged.shape.rank != 2 or ragged.ragged_rank != 1 or ragged.dtype != tf.string:
        raise ValueError(
            f"Expected `{name}` as a tf.string RaggedTensor of shape [B, (N)]. "
            f"Received: {ragged.dtype.name} of shape {ragged.shape}"
        )
    return ragged


def _kinds(padded, in_sequence, tags):
    """The kind of every symbol, classified as `delinearize` does: [B, S]."""
    is_open = tf.strings.regex_full_match(padded, r"\(" + _LABEL)
    is_close = tf.strings.regex_full_match(padded, r"\)" + _LABEL)
    is_leaf = tf.equal(padded, PLACEHOLDER)
    if tags:
        reserved = tf.reduce_any(
            tf.equal(padded[..., None], tf.constant(RESERVED_PIECES)), axis=-1
        )
        is_leaf |= tf.strings.regex_full_match(padded, _LABEL) & ~reserved
    # A well-formed `(X` or `)X` is a bracket before it is a tag.
    kinds = tf.where(is_leaf, _LEAF, _UNKNOWN)
    kinds = tf.where(is_close, _CLOSE, kinds)
    kinds = tf.where(is_open, _OPEN, kinds)
    return tf.where(in_sequence, kinds, _PAD)


def _pair_brackets(kinds):
    """Pairs every close with the bracket it closes, with a stack.

    Args:
        kinds: int32 tensor of shape [B, S], the symbol kinds.

    Returns:
        `(openers, closers)`, int32 tensors of shape [B, S]: at a close, the
        position of the bracket it closes (the innermost open one), or -1
        when none is open (an unopened close); at an open, the position of
        its close, or -1 when it is still open at the end; -1 elsewhere.
    """
    batch, length = tf.shape(kinds)[0], tf.shape(kinds)[1]
    columns = tf.range(length)[None, :]  # [1, S]
    nothing = tf.fill([batch, length], -1)

    def step(t, depth, stack, openers, closers):
        # depth: [B] open brackets; stack: [B, S] their positions, innermost
        # at depth - 1.
        kind = kinds[:, t]  # [B]
        top = tf.gather(stack, tf.maximum(depth - 1, 0), batch_dims=1)  # [B]
        pops = (kind == _CLOSE) & (depth > 0)  # [B]
        pushes = kind == _OPEN  # [B]
        openers = tf.where(
            (columns == t) & pops[:, None], top[:, None], openers
        )  # [B, S]
        closers = tf.where(
            (columns == top[:, None]) & pops[:, None], t, closers
        )  # [B, S]
        stack = tf.where(
            (columns == depth[:, None]) & pushes[:, None], t, stack
        )  # [B, S]
        depth += tf.cast(pushes, tf.int32) - tf.cast(pops, tf.int32)
        return t + 1, depth, stack, openers, closers

    _, _, _, openers, closers = tf.while_loop(
        lambda t, *_: t < length,
        step,
        (tf.constant(0), tf.zeros([batch], tf.int32), nothing, nothing, nothing),
    )
    return openers, closers
