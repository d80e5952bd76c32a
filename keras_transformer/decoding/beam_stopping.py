"""When beam search is done with a sentence: the exact bound (ours, the
paper's "terminate early when possible", §6.1) or Hugging Face's rules.

A sentence is done when its K finished hypotheses are final; a done
sentence's finished set is frozen (no later hypothesis is merged into it) and
the loop stops once every sentence is done. The rules, for `alive` the best
alive beam's log probability (the beams are sorted, log probabilities only
fall) and `worst` the worst of the K finished scores:

- `"exact"`: `alive / penalty(max length) < worst`, no alive beam can beat
  the worst finished one at any length it may still reach (the penalty grows
  with length for alpha >= 0), so stopping changes nothing: the K best
  hypotheses under the length-penalised score. Hugging Face's
  `early_stopping="never"`.
- `"heuristic"`: K hypotheses are finished and `alive / penalty(current
  length) <= worst`, the best alive beam would not beat the worst finished one
  if it ended now. With alpha > 0 a longer hypothesis may still score better,
  so the search can stop before the best one is found. Hugging Face's default,
  `early_stopping=False`, as its vectorized beam search (transformers 5)
  applies it: the best alive beam, not the best of all candidates of the
  step, which older releases compared and which may stop a step later.
- `"k_finished"`: K hypotheses are finished. Hugging Face's
  `early_stopping=True`.

A sentence whose alive beams are all placeholders (every extension finished at
its length limit) is done under every rule.

Notation: B batch, K beams.
"""

from keras import ops

from keras_transformer.decoding.length_penalty import length_penalty

EARLY_STOPPINGS = ("exact", "heuristic", "k_finished")
# Log probability of an impossible hypothesis: finite, so that sums and
# comparisons stay well defined (no inf - inf), and far below any real score.
NEG_INF = -1.0e9


def is_valid(log_probs):
    """Whether a hypothesis is real: one descending from a `NEG_INF`
    placeholder (or a banned token) is not."""
    return ops.greater(log_probs, NEG_INF / 2)


def sentences_done(
    early_stopping,
    alive_log_probs,
    finished_scores,
    finished_flags,
    length,
    max_penalty,
    alpha,
    normalization,
):
    """`[B]` bool: the sentences that are done after a step (module docstring).

    Args:
        early_stopping: `"exact"`, `"heuristic"` or `"k_finished"`.
        alive_log_probs: float32 `[B, K]`, the alive beams, sorted best first.
        finished_scores: float32 `[B, K]`, the finished scores, sorted best
            first; `NEG_INF` for empty slots.
        finished_flags: bool `[B, K]`, whether a finished slot is filled.
        length: scalar int tensor, the tokens each alive beam has generated.
        max_penalty: float32 `[B]`, the length penalty at each sentence's
            maximum length.
        alpha: float or scalar float tensor, the length penalty's exponent.
        normalization: `"gnmt"` or `"average"` (`length_penalty`).
    """
    best_alive = alive_log_probs[:, 0]
    no_alive = ops.logical_not(is_valid(best_alive))
    all_finished = ops.all(finished_flags, axis=1)
    if early_stopping == "k_finished":
        return ops.logical_or(all_finished, no_alive)
    worst = finished_scores[:, -1]
    if early_stopping == "exact":
        # An empty slot's NEG_INF never beats a real alive beam.
        beaten = ops.greater(worst, best_alive / max_penalty)
        return ops.logical_or(beaten, no_alive)
    penalty = length_penalty(length, alpha, normalization)
    beaten = ops.logical_and(all_finished, ops.less_equal(best_alive / penalty, worst))
    return ops.logical_or(beaten, no_alive)
