"""The search loop over a cache that grows in segments, doubling its length."""

from keras import ops


def segment_ends(max_length, first_segment):
    """The cache lengths of the segments: `first_segment`, doubled, up to T.

    Args:
        max_length: int. T, the last end.
        first_segment: int or `None`. The first segment's length; `None` (or
            one of at least T) gives a single segment.

    Returns:
        A list of increasing ints ending with `max_length`.

    Example:

    >>> segment_ends(40, 8)
    [8, 16, 32, 40]
    """
    if first_segment is None:
        return [max_length]
    if not isinstance(first_segment, int) or first_segment < 1:
        raise ValueError(
            "`first_segment` must be a positive integer or None. "
            f"Received: first_segment={first_segment}"
        )
    if first_segment >= max_length:
        return [max_length]
    ends = []
    end = first_segment
    while end < max_length:
        ends.append(end)
        end *= 2
    return ends + [max_length]


def growing_while_loop(cond, body, state, max_length, grow_cache_fn, first_segment):
    """`ops.while_loop(cond, body, state)` whose cache grows with the index.

    A decoding step costs time in proportion to its self-attention cache's
    length (attention reads it; beam search also reorders it), and a fixed-size
    buffer makes every step pay for all T positions. Here the loop runs in
    segments: before the segment whose last position is `end`, the cache (the
    last entry of `state`) is grown to `end` positions by `grow_cache_fn`, and
    the segment's loop stops at index `end` (or when `cond` does). Segment ends
    double from `first_segment` (`segment_ends`), so the cache is at most
    twice what the step needs while the graph holds only a logarithmic number
    of loops. Every loop has static shapes: it traces into `tf.function`,
    compiles with XLA and runs under `jax.jit`.

    Args:
        cond: `fn(index, *rest) -> bool`, as for `ops.while_loop`; `state[0]`
            is the scalar index of the token fed next.
        body: `fn(*state) -> state`.
        state: tuple, the index first and the cache last.
        max_length: int. T, the index at which the search stops anyway.
        grow_cache_fn: `fn(cache, length) -> cache` with room for `length`
            positions, or `None` (one loop over the cache as given).
        first_segment: int or `None`. See `segment_ends`.

    Returns:
        The final state.
    """
    if grow_cache_fn is None:
        return ops.while_loop(cond, body, state)
    for end in segment_ends(max_length, first_segment):
        state = (*state[:-1], grow_cache_fn(state[-1], end))

        def segment_cond(index, *rest, end=end):
            return ops.logical_and(ops.less(index, end), cond(index, *rest))

        state = ops.while_loop(segment_cond, body, state)
    return state
