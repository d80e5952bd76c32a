"""The GNMT length penalty used by beam search (paper §6.1: alpha = 0.6)."""

from keras import ops


def length_penalty(length, alpha):
    """Returns the GNMT length penalty `((5 + length) / 6) ** alpha`.

    Wu et al. (2016), Eq. 14. Beam search divides a hypothesis' log probability
    by it, so that longer hypotheses are not penalised merely for having more
    factors below one. The paper uses alpha = 0.6 (§6.1); alpha = 0 turns the
    penalty off (it is then 1 for every length).

    Args:
        length: int, float or tensor. The number of generated tokens, eos
            included.
        alpha: float. The strength of the penalty, >= 0.

    Returns:
        A float32 tensor shaped like `length`.

    Example:

    >>> float(length_penalty(7, 1.0))
    2.0
    """
    length = ops.cast(length, "float32")
    return ops.power((5.0 + length) / 6.0, alpha)
