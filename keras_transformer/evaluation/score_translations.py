"""sacreBLEU corpus BLEU and chrF of detokenized translations."""

import sacrebleu

from keras_transformer.evaluation.paper_style_bleu import (
    PAPER_STYLE_LABEL,
    paper_style_bleu,
)


def score_translations(hypotheses, references, tokenize="13a", paper_style=False):
    """Scores detokenized translations with sacrebleu.

    Args:
        hypotheses: list of str, detokenized system outputs.
        references: list of str, one detokenized reference per hypothesis.
        tokenize: str. sacreBLEU's BLEU tokenizer (`"13a"`, the WMT default;
            `"intl"`, `"zh"`, ...). Defaults to `"13a"`.
        paper_style: bool. Also compute the paper's tokenized, compound-split
            BLEU (see `paper_style_bleu`). Defaults to `False`.

    Returns:
        A dict: `bleu` and `chrf` (floats, 0-100), `bleu_signature` and
        `chrf_signature` (sacreBLEU signature strings, to report with the
        scores), `bleu_detail` (sacreBLEU's one-line summary), `num_sentences`;
        with `paper_style`, also `paper_style_bleu` and `paper_style_label`.

    Example:

    >>> score_translations(["the cat sat"], ["the cat sat"])["chrf"]
    100.0
    """
    if len(hypotheses) != len(references):
        raise ValueError(
            "Expected one reference per hypothesis. Received: "
            f"len(hypotheses)={len(hypotheses)}, len(references)={len(references)}"
        )
    bleu = sacrebleu.metrics.BLEU(tokenize=tokenize)
    chrf = sacrebleu.metrics.CHRF()
    bleu_score = bleu.corpus_score(list(hypotheses), [list(references)])
    chrf_score = chrf.corpus_score(list(hypotheses), [list(references)])
    result = {
        "bleu": bleu_score.score,
        "chrf": chrf_score.score,
        "bleu_signature": str(bleu.get_signature()),
        "chrf_signature": str(chrf.get_signature()),
        "bleu_detail": str(bleu_score),
        "num_sentences": len(hypotheses),
    }
    if paper_style:
        result["paper_style_bleu"] = paper_style_bleu(hypotheses, references)
        result["paper_style_label"] = PAPER_STYLE_LABEL
    return result
