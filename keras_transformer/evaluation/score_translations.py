"""sacreBLEU corpus BLEU and chrF of detokenized translations."""

import sacrebleu

from keras_transformer.evaluation.bleu_tokenizer import (
    bleu_tokenizer,
    primary_language,
)
from keras_transformer.evaluation.paper_style_bleu import (
    PAPER_STYLE_LABEL,
    check_paper_style_language,
    paper_style_bleu,
)


def score_translations(
    hypotheses, references, tokenize=None, paper_style=False, target_language=None
):
    """Scores detokenized translations with sacrebleu: BLEU and chrF.

    chrF (character n-grams, no tokenizer) is always computed beside BLEU, so
    that every target language has a score that does not depend on word
    segmentation. BLEU's tokenizer follows the target language (see
    `bleu_tokenizer`: `13a` as in the paper's §6.1 scores, `zh`, `ja-mecab`,
    `ko-mecab`), and its signature says which was used (`tok:zh`).

    Args:
        hypotheses: list of str, detokenized system outputs.
        references: list of str, one detokenized reference per hypothesis.
        tokenize: str or `None`. sacreBLEU's BLEU tokenizer (`"13a"`, the WMT
            default; `"intl"`, `"zh"`, ...), or `None` to choose it from
            `target_language`. Defaults to `None`.
        paper_style: bool. Also compute the paper's tokenized, compound-split
            BLEU (see `paper_style_bleu`; `target_language` must then be
            `"de"` or `"fr"`). Defaults to `False`.
        target_language: str or `None`. The references' language code (e.g.
            `"de"`, `"zh-Hans"`), or `None` if not known (`13a`). Defaults to
            `None`.

    Returns:
        A dict: `bleu` and `chrf` (floats, 0-100), `bleu_signature` and
        `chrf_signature` (sacreBLEU signature strings, to report with the
        scores), `bleu_detail` (sacreBLEU's one-line summary), `num_sentences`;
        with `paper_style`, also `paper_style_bleu` and `paper_style_label`.

    References:
        - [Papineni et al., 2002. BLEU: a Method for Automatic Evaluation of Machine
          Translation](https://aclanthology.org/P02-1040/).
        - [Post, 2018. A Call for Clarity in Reporting BLEU Scores](
          https://aclanthology.org/W18-6319/) (sacreBLEU and its signatures).

    Examples:
        >>> score_translations(["the cat sat"], ["the cat sat"])["chrf"]
        100.0
        >>> result = score_translations(["我喜欢猫"], ["我喜欢猫"],
        ...                             target_language="zh")
        >>> "tok:zh" in result["bleu_signature"]
        True
    """
    if len(hypotheses) != len(references):
        raise ValueError(
            "Expected one reference per hypothesis. Received: "
            f"len(hypotheses)={len(hypotheses)}, len(references)={len(references)}"
        )
    if tokenize is None:
        tokenize = bleu_tokenizer(target_language)
    if paper_style:
        check_paper_style_language(target_language)
    # trg_lang only makes sacreBLEU warn when an explicit `tokenize` does not
    # suit the language (e.g. 13a for Chinese); the score does not depend on it.
    bleu = sacrebleu.metrics.BLEU(
        tokenize=tokenize, trg_lang=primary_language(target_language) or ""
    )
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
        result["paper_style_bleu"] = paper_style_bleu(
            hypotheses, references, target_language
        )
        result["paper_style_label"] = PAPER_STYLE_LABEL
    return result
