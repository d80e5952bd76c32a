"""Done sentences leave a search's state (`drop_done=True` of `beam_search`,
here, and of greedy search, `token_by_token_search`, with `rows_to_keep`).

The sentences of a batch finish at different steps (about half of a beam-4
search's sentence-steps on the translation demo's test split are of done
sentences), and a search that keeps every row until the last is done runs its
decoder on all of them. As CTranslate2 does, a step after which enough
sentences are done writes their finished hypotheses to the results and
gathers the others' rows of the state, so later steps run on fewer rows. The
state's batch then has a run-time size: TensorFlow graph mode, not XLA or
JAX, whose loops keep their shapes. The results are those of the search that
keeps every row (a done sentence's finished set is frozen).

Beam search's state is `beam_search`'s loop state, `(index, alive_seq, alive_log_probs,
finished_seq, finished_scores, finished_flags, done, cache, sentences)`, with
`sentences["rows"]` `[B]` added: each row's sentence among the B0 given. The
results are `(finished_seq [B0, K, T + 1], finished_scores [B0, K],
finished_flags [B0, K])`.

Notation: B the sentences in the state, B0 those given, K beams, T the buffer.
"""

import keras
from keras import ops

from keras_transformer.decoding.beam_utils import gather_beams
from keras_transformer.decoding.in_place_cache import run_time_shapes


def check_drop_done(drop_done):
    """Refuses `drop_done=True` where a loop keeps its shapes (XLA, JAX)."""
    if drop_done and not run_time_shapes():
        backend = keras.backend.backend()
        raise ValueError(
            "`drop_done=True` changes the batch inside the loop: it needs "
            "TensorFlow, eagerly or in a graph outside XLA (XLA and JAX keep "
            f"a loop's shapes). Received: drop_done=True on the {backend} "
            "backend" + (", under XLA" if backend == "tensorflow" else "")
        )


def kept_size(searching):
    """The state's batch after a drop: the smallest power of two that holds
    `searching` sentences (a scalar int tensor, at least 1).

    A drop happens when this is under half the state's batch (from 256
    sentences: once 64 or fewer still search), so each drop (a gather of the
    whole state) at least halves the rows of the steps after it, and the
    searches of a file meet few batch shapes: TensorFlow's CPU kernels set up
    work for each new shape (oneDNN compiles a bfloat16 matmul kernel per
    shape, BUILD_NOTES.md, "Mixed-precision training"), which a file's one
    pass pays. Measured against drops at every power of two and at powers of
    four, and at 1.5 times powers of two: experiment log, "Done sentences leave
    the search".
    """
    count = ops.cast(ops.maximum(searching, 1), "float32")
    return ops.cast(ops.power(2.0, ops.ceil(ops.log2(count))), "int32")


def select_beam_rows(cache, sentences, flat_indices):
    """The default `select_cache_fn`: every leaf of the cache has one row per
    beam, `flat_indices` `[B'*K]` are kept."""
    return gather_beams(cache, flat_indices)


def start_dropping(state, select_cache_fn, beam_size):
    """`(state, results)` before the first step: every sentence, gathered by
    a run-time selection, so that the state's batch has a run-time size from
    the start (as after a drop), and the results as the initial finished set.

    Args:
        state: the loop state before the first step.
        select_cache_fn: `beam_search`'s.
        beam_size: int. K.
    """
    done, sentences = state[6], state[8]
    batch_size = ops.shape(done)[0]
    # [B0]
    state = (*state[:8], {**sentences, "rows": ops.arange(batch_size, dtype="int32")})
    results = tuple(state[3:6])
    return _keep(state, ops.logical_not(done), select_cache_fn, beam_size), results


def drop_done_sentences(state, results, select_cache_fn, beam_size):
    """The loop state after a step, less the done sentences beyond
    `kept_size` of those still searching, and the results with theirs written.

    Returns:
        The tuple `(*state, results)`.
    """
    drop, keep = rows_to_keep(state[6])

    def dropped():
        written = _write(results, state, ops.logical_not(keep))
        return (*_keep(state, keep, select_cache_fn, beam_size), written)

    return ops.cond(drop, dropped, lambda: (*state, results))


def rows_to_keep(done):
    """`(drop, keep)` for the done flags `[B]` of a step: whether to drop
    (the rows still searching fit in a `kept_size` under half of B), and
    which rows to keep then `[B]`: those still searching and the first done
    ones to make up `kept_size` (they stay frozen)."""
    # [B] int32: 1 for a done row, 0 for one still searching
    is_done = ops.cast(done, "int32")
    searching = ops.shape(done)[0] - ops.sum(is_done)
    size = kept_size(searching)
    drop = ops.logical_and(
        ops.less(2 * size, ops.shape(done)[0]), ops.greater(searching, 0)
    )
    keep = ops.logical_or(
        ops.logical_not(done), ops.less_equal(ops.cumsum(is_done), size - searching)
    )
    return drop, keep


def run_time_rows(keep):
    """The indices `[B']` where `keep` `[B]` holds, a run-time number."""
    return ops.cast(ops.nonzero(keep)[0], "int32")


def every_result(state, results):
    """The results once the loop ends: those of the sentences still in the
    state (done, or at their limit) written too."""
    return _write(results, state, ops.ones_like(state[6]))


def _keep(state, keep, select_cache_fn, beam_size):
    """The state of the sentences where `keep` `[B]` holds: every
    per-sentence tensor and the cache gathered."""
    index, *per_sentence, cache, sentences = state
    # [B] -> [B']
    kept = run_time_rows(keep)
    # [B', 1] + [K] -> [B', K] -> [B'*K], their beam rows
    rows = ops.reshape(
        ops.expand_dims(kept * beam_size, 1) + ops.arange(beam_size, dtype="int32"),
        (-1,),
    )
    per_sentence = [ops.take(x, kept, axis=0) for x in per_sentence]
    cache = select_cache_fn(cache, kept, rows)
    sentences = {name: ops.take(x, kept, axis=0) for name, x in sentences.items()}
    return (index, *per_sentence, cache, sentences)


def write_rows(results, values, rows, picked):
    """`results` (`[B0, ...]` each, one row per sentence given) with the rows
    of `values` (`[B, ...]` each, the state's) where `picked` `[B]` holds
    written to their sentences, `rows` `[B]` (the state's `"rows"`)."""
    # [B] -> [G], the state's rows to write, and [G, 1], their sentences
    picked = run_time_rows(picked)
    targets = ops.expand_dims(ops.take(rows, picked, axis=0), 1)
    return tuple(
        ops.scatter_update(result, targets, ops.take(value, picked, axis=0))
        for result, value in zip(results, values, strict=True)
    )


def _write(results, state, picked):
    """`results` with the finished hypotheses of the state's sentences where
    `picked` `[B]` holds written to their rows."""
    return write_rows(results, state[3:6], state[8]["rows"], picked)
