"""The length penalties of beam search: the paper's GNMT penalty (§6.1:
alpha = 0.6), and plain length normalisation (Marian's, Hugging Face's)."""

from keras import ops


def length_penalty(length, alpha, normalization="gnmt"):
    """Returns what beam search divides a hypothesis' log probability by.

    `"gnmt"`: `((5 + length) / 6) ** alpha`, Wu et al. (2016), Eq. 14, so
    that longer hypotheses are not penalised merely for having more factors
    below one; the paper uses alpha = 0.6 (§6.1). `"average"`: `length **
    alpha`, the normalisation of Marian (`--normalize`) and of Hugging Face's
    `length_penalty`, with which imported Marian models were tuned. Either
    grows with length for alpha >= 0 (beam search's stopping bound needs it),
    and alpha = 0 turns the penalty off (it is then 1 for every length).

    Args:
        length: int, float or tensor. The number of generated tokens, eos
            included.
        alpha: float. The strength of the penalty, >= 0.
        normalization: `"gnmt"` (default) or `"average"`.

    Returns:
        A float32 tensor shaped like `length`.

    References:
        - [Wu et al., 2016. Google's Neural Machine Translation System: Bridging the Gap
          between Human and Machine Translation](https://arxiv.org/abs/1609.08144), §7
          (Eq. 14).
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §6.1.

    Examples:
        >>> float(length_penalty(7, 1.0))
        2.0
        >>> float(length_penalty(7, 1.0, "average"))
        7.0
    """
    length = ops.cast(length, "float32")
    if normalization == "average":
        return ops.power(length, alpha)
    if normalization != "gnmt":
        raise ValueError(
            "Unknown length normalization; expected 'gnmt' or 'average'. "
            f"Received: normalization={normalization!r}"
        )
    return ops.power((5.0 + length) / 6.0, alpha)
