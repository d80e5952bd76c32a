"""Well-formed linearized trees by construction: a decoding constraint for
parsing (§6.3).

The parser's output is a bracket sequence with one word symbol (`XX`, or a
POS tag) per input word (Vinyals et al. 2015). An undertrained model ends the
sequence early or emits too many word symbols, and de-linearization has to
repair the tree (the surplus words go under the root, which costs recall).
With this constraint every hypothesis of the search is well formed: exactly
one word symbol per input word, no close with nothing open, and end of
sentence only once every bracket is closed. The paper does not say whether
its parser constrains the search; this is a stated deviation
(BUILD_NOTES.md, "Parsing"), on by default in the parsing recipes and off
with `DecodingConfig(constrain_brackets=False)`.

The constraint is model-agnostic: it wraps a search's
`symbols_to_logits_fn` and adds two int32 counters per row to the search
state (words still to emit, brackets open) beside each row's output limit
(and, matching brackets, a stack per row),
so it runs in beam, greedy and sampling search alike, under `tf.function`,
XLA and `jax.jit`. Disallowed tokens get `NEG_INF` logits, so each step's
distribution is renormalised over the allowed ones. Without
`matching_close_ids` labels are not matched: a close may carry another label
than the bracket it closes (de-linearization relabels it and counts the
repair), and a bracket may close with nothing in it (de-linearization drops
it). With them the constraint also keeps a stack of the open brackets per
row: the only close allowed is the innermost open bracket's own, and only
once a word has been emitted inside it, so every hypothesis de-linearizes
without a repair.

The constraint also bounds the output, which lets a parser's search buffer
follow the batch (`tree_length_limit`): a tree over n words with c
constituents below the root takes n + 2c symbols, and no tree needs more
constituents than words plus a few unary chains.
"""

import dataclasses

import numpy as np
from keras import ops

from keras_transformer.decoding.beam_search import NEG_INF
from keras_transformer.decoding.beam_utils import take_per_row
from keras_transformer.validation import check_positive_int

# Constituents beyond one per word that `tree_length_limit` leaves room for:
# the unary chains and single-word constituents of a tree (every one of the
# 4,636 bundled GUM trees has at most 7 more constituents than words).
TREE_EXTRA_CONSTITUENTS = 10


def tree_length_limit(word_counts):
    """The output limit, eos included, of a constrained search over sentences
    of `word_counts` words: `3 n + 2 TREE_EXTRA_CONSTITUENTS + 1`, room for
    n word symbols and the brackets of up to `n + TREE_EXTRA_CONSTITUENTS`
    constituents. The paper's limit is input + 300 (§6.3); for n < 140
    words this one is shorter, and the search, whose cost per step grows with
    its buffer, runs over a buffer sized by it (BUILD_NOTES.md, "Parsing
    speed"). The constraint closes every tree within the limit.

    Args:
        word_counts: int, or an int array or tensor `[B]`.

    Returns:
        The same type: each sentence's limit.
    """
    return 3 * word_counts + (2 * TREE_EXTRA_CONSTITUENTS + 1)


def one_beam_as_greedy(config):
    """`config` (a `DecodingConfig`) with greedy search in place of a
    bracket-constrained beam search of one beam, which keeps greedy search's
    hypothesis (same ids and score, tested): the constraint allows eos only
    once the tree is complete, and then nothing else, so the one beam never
    chooses between ending and going on. Greedy search skips the beam's
    bookkeeping (BUILD_NOTES.md, "Parsing speed"). Other configs unchanged."""
    if config.constrain_brackets and config.method == "beam" and config.beam_size == 1:
        return dataclasses.replace(config, method="greedy")
    return config


class BracketConstraint:
    """The symbol classes of a linearized-tree vocabulary.

    Args:
        vocab_size: int. The target vocabulary size V.
        word_ids: ids of the word symbols (`XX`, or the POS tags).
        open_ids: ids of the opening brackets (`(NP`, ...).
        close_ids: ids of the closing brackets (`)NP`, ...).
        eos_id: int. End of sentence.
        matching_close_ids: optional list parallel to `open_ids`: the close
            of each opening bracket (its label's), or -1 for none (such an
            opening bracket is never emitted). Given, closes are matched to
            their brackets and never close an empty one.

    Every other id (padding, unknown, bos) is never generated.

    References:
        - [Vinyals et al., 2015. Grammar as a Foreign Language](
          https://arxiv.org/abs/1412.7449) (the linearized trees).
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §6.3.

    Examples:
        >>> constraint = BracketConstraint(8, word_ids=[4], open_ids=[5],
        ...                                close_ids=[6], eos_id=3)
        >>> ids, scores = translate(model, source_ids, config,
        ...                         constraint=constraint, word_counts=[2, 5])
    """

    def __init__(
        self, vocab_size, word_ids, open_ids, close_ids, eos_id, matching_close_ids=None
    ):
        check_positive_int("vocab_size", vocab_size)
        classes = {"word_ids": word_ids, "open_ids": open_ids, "close_ids": close_ids}
        masks = {}
        taken = np.zeros(vocab_size, bool)
        for name, ids in classes.items():
            ids = np.asarray(list(ids), dtype=np.int64)
            if ids.size == 0 or ids.min() < 0 or ids.max() >= vocab_size:
                raise ValueError(
                    f"`{name}` must be a non-empty list of ids in [0, {vocab_size}). "
                    f"Received: {name}={ids.tolist()}"
                )
            if taken[ids].any() or ids.size != np.unique(ids).size:
                raise ValueError(
                    "A symbol id belongs to one class only. Received: "
                    f"{name}={ids.tolist()} with repeated or shared ids "
                    f"{sorted(set(np.flatnonzero(taken).tolist()) & set(ids.tolist()))}"
                )
            taken[ids] = True
            masks[name] = np.isin(np.arange(vocab_size), ids)
        if not 0 <= eos_id < vocab_size or taken[eos_id]:
            raise ValueError(
                f"`eos_id` must be an id in [0, {vocab_size}) outside the symbol "
                f"classes. Received: eos_id={eos_id}"
            )
        self.vocab_size = vocab_size
        self.eos_id = int(eos_id)
        self._is_word = masks["word_ids"]
        self._is_open = masks["open_ids"]
        self._is_close = masks["close_ids"]
        # [V]: the close id each opening bracket pushes, -1 for other ids
        self._close_of = None
        if matching_close_ids is not None:
            self._close_of = _close_table(
                vocab_size, open_ids, matching_close_ids, masks["close_ids"]
            )
            self._is_open = self._is_open & (self._close_of >= 0)

    @property
    def matches_brackets(self) -> bool:
        """Whether closes are matched to their brackets (a stack per row)."""
        return self._close_of is not None

    def initial_state(self, word_counts, max_lengths, buffer_length=None):
        """The counters before the first step, `[R]` each: `words` still to
        emit, `depth` (brackets open) and `limit` (the row's output limit).
        Matching brackets, also the stack `[R, buffer_length]` of the open
        brackets' closes (`closes`) and of the words left when each opened
        (`opened_at`); `buffer_length` (an int, or a scalar tensor outside
        XLA) is the search's output buffer, deeper than any tree in it."""
        words = ops.cast(ops.convert_to_tensor(word_counts), "int32")
        limit = ops.cast(ops.convert_to_tensor(max_lengths), "int32")
        state = {"words": words, "depth": ops.zeros_like(words), "limit": limit}
        if self._close_of is not None:
            if buffer_length is None:
                raise ValueError(
                    "Matching brackets needs the search's buffer length. "
                    "Received: buffer_length=None"
                )
            # [R, L]
            stack = ops.zeros((ops.shape(words)[0], buffer_length), "int32")
            state.update(closes=stack - 1, opened_at=stack)
        return state

    def advance(self, state, ids):
        """The counters after emitting `ids` (int `[R]`; bos counts as nothing)."""
        ids = ops.cast(ids, "int32")
        is_word = ops.cast(ops.take(self._is_word, ids), "int32")
        is_open = ops.cast(ops.take(self._is_open, ids), "int32")
        is_close = ops.cast(ops.take(self._is_close, ids), "int32")
        advanced = {
            "words": ops.maximum(state["words"] - is_word, 0),
            "depth": ops.maximum(state["depth"] + is_open - is_close, 0),
            "limit": state["limit"],
        }
        if self._close_of is not None:
            # An opening bracket is pushed at slot `depth`: [R, L]
            slots = ops.arange(ops.shape(state["closes"])[1], dtype="int32")
            push = ops.logical_and(
                ops.expand_dims(is_open > 0, 1),
                ops.equal(slots, ops.expand_dims(state["depth"], 1)),
            )
            closes = ops.expand_dims(ops.take(self._close_of, ids), 1)
            advanced["closes"] = ops.where(push, closes, state["closes"])
            advanced["opened_at"] = ops.where(
                push, ops.expand_dims(state["words"], 1), state["opened_at"]
            )
        return advanced

    def allowed(self, state, index):
        """bool `[R, V]`: the tokens each row may emit as its `index + 1`-th.

        Words while words remain; closes while a bracket is open (matching
        brackets: only the innermost open bracket's own close, once a word
        is inside it); eos once both counters are 0; an opening bracket
        while words remain (one opened with none left would stay empty) and
        while the row's limit leaves room for the remaining words, every
        close and eos after it, so that the search can always end within
        the limit.
        """
        words, depth = state["words"], state["depth"]
        # Tokens this row may still write, this one included.
        room = state["limit"] - ops.cast(index, "int32")
        may_open = ops.logical_and(words > 0, words + depth + 3 <= room)
        done = ops.logical_and(words == 0, depth == 0)
        is_eos = ops.equal(ops.arange(self.vocab_size), self.eos_id)
        # [R] -> [R, 1] against the class masks [V] -> [R, V]
        column = lambda x: ops.expand_dims(x, 1)  # noqa: E731
        may_close = ops.logical_and(column(depth > 0), self._is_close)
        if self._close_of is not None:
            # The innermost open bracket: [R, 1], its close and the words
            # left when it opened; only its close, once a word is inside.
            top = column(ops.maximum(depth - 1, 0))
            close = take_per_row(state["closes"], top)
            opened_at = take_per_row(state["opened_at"], top)
            may_close = ops.logical_and(
                ops.logical_and(may_close, column(words) < opened_at),
                ops.equal(ops.arange(self.vocab_size, dtype="int32"), close),
            )
        return ops.logical_or(
            ops.logical_or(
                ops.logical_and(column(words > 0), self._is_word),
                ops.logical_and(column(may_open), self._is_open),
            ),
            ops.logical_or(may_close, ops.logical_and(column(done), is_eos)),
        )

    def wrap(self, symbols_to_logits_fn):
        """A `symbols_to_logits_fn` over the state `{"search": inner state,
        "constraint": counters}`, with the disallowed logits at `NEG_INF`."""

        def constrained(ids, index, state):
            counters = self.advance(state["constraint"], ops.reshape(ids, (-1,)))
            logits, inner = symbols_to_logits_fn(ids, index, state["search"])
            allowed = self.allowed(counters, index)
            if len(logits.shape) == 3:
                allowed = ops.expand_dims(allowed, 1)
            logits = ops.where(allowed, logits, NEG_INF)
            return logits, {"search": inner, "constraint": counters}

        return constrained


def _close_table(vocab_size, open_ids, matching_close_ids, is_close):
    """int32 `[V]`: the close id of each opening bracket, -1 elsewhere."""
    open_ids = list(open_ids)
    matching = list(matching_close_ids)
    if len(matching) != len(open_ids) or any(
        close != -1 and not (0 <= close < vocab_size and is_close[close])
        for close in matching
    ):
        raise ValueError(
            "`matching_close_ids` must hold one close id (or -1) per opening "
            f"bracket. Received: matching_close_ids={matching[:20]} for "
            f"{len(open_ids)} opening brackets"
        )
    table = np.full(vocab_size, -1, np.int32)
    table[np.asarray(open_ids, dtype=np.int64)] = matching
    return table


def constrained_search(
    constraint,
    word_counts,
    max_lengths,
    step_fn,
    state,
    rows_per_count,
    buffer_length=None,
):
    """`(step_fn, state)` with the constraint's counters added to the state.

    Args:
        constraint: a `BracketConstraint`, or `None` (returned unchanged).
        word_counts: int `[B]`, the words of each sentence.
        max_lengths: int `[B]`, each sentence's output limit (eos included).
        step_fn: a search's `symbols_to_logits_fn`.
        state: its initial state.
        rows_per_count: int. The counters' rows per sentence at the start: 1
            when the search tiles its initial state itself (`tile_beams`), K
            for a state that is already one row per beam.
        buffer_length: the search's output buffer T (int, or scalar tensor);
            needed when the constraint matches brackets.
    """
    if constraint is None:
        return step_fn, state
    if word_counts is None:
        raise ValueError(
            "A `BracketConstraint` needs the words of each sentence. "
            "Received: word_counts=None"
        )
    counts = ops.cast(ops.convert_to_tensor(word_counts), "int32")
    limits = ops.cast(max_lengths, "int32")
    if rows_per_count > 1:
        counts = ops.repeat(counts, rows_per_count, axis=0)
        limits = ops.repeat(limits, rows_per_count, axis=0)
    return constraint.wrap(step_fn), {
        "search": state,
        "constraint": constraint.initial_state(counts, limits, buffer_length),
    }
