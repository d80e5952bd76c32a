"""The next-word pointer in a search: each row counts its word symbols.

A model with the next-word pointer (`NextWordPointer`, parsing §6.3) needs,
at each decoder step, the index of the next source word to cover: the number
of word symbols the row has emitted so far. Teacher forcing computes it with
a cumulative sum over the decoder inputs; a search carries it as one int32
counter per row in its state, advanced by each step's input token, so beam
search reorders it with the hypotheses like any other state. The counter is
the one `BracketConstraint` keeps as "words left", but the pointer works with
or without the constraint, so it has its own.
"""

from keras import ops


def next_word_search(model, step_fn, state, rows):
    """`(step_fn, state)` with the next-word counter added, for a pointer model.

    Args:
        model: the `Transformer`; without the pointer, `step_fn` and `state`
            are returned unchanged.
        step_fn: a search's `symbols_to_logits_fn(ids, index, state,
            next_word_index=...)`.
        state: its initial state.
        rows: int or scalar tensor. The counter's rows at the start: the
            batch, or batch x K for a state that is already one row per beam.

    Returns:
        A tuple `(step_fn, state)`: the state is `{"search": state, "words":
        [rows] int32}`, and each step passes `next_word_index` `[R, 1]` (the
        count including the step's input) to `step_fn`.
    """
    pointer = getattr(model, "pointer", None)
    if pointer is None:
        return step_fn, state

    def step(ids, index, state):
        # [R, 1] or [R] -> [R, 1]: the step's input token
        ids = ops.reshape(ids, (-1, 1))
        next_word = pointer.next_word_index(ids, words_before=state["words"])
        logits, inner = step_fn(ids, index, state["search"], next_word_index=next_word)
        return logits, {"search": inner, "words": ops.reshape(next_word, (-1,))}

    return step, {"search": state, "words": ops.zeros((rows,), "int32")}
