"""The paper's BLEU: tokenized, with hyphenated compounds split (Table 2).

The paper's En-De scores come from tensor2tensor's `get_ende_bleu.sh`: Moses
`tokenizer.perl` on hypotheses and references, then every hyphen inside a word
rewritten as ` ##AT##-##AT## ` ("compound splitting", so that a hyphenated
compound counts as three tokens, as in the tokenized references of earlier
WMT'14 work), then `multi-bleu.perl`. Such scores depend on the tokenization and
are not comparable with sacreBLEU's; they are reported for comparison with
Table 2 only, and labelled so.

Deviation: Moses `tokenizer.perl` is not a dependency here; sacrebleu's `13a`
tokenizer (mteval-v13a, which also leaves intra-word hyphens alone) stands in
for it. Tokenized BLEU is then computed by sacrebleu with `tokenize="none"`,
which matches `multi-bleu.perl` on the same tokens.

Only the paper's Table 2 target languages, German and French, are accepted.
`get_ende_bleu.sh` is an En-De script, and the paper does not say how its En-Fr
score was tokenized; the same procedure is applied to French (its hyphenated
forms, `peut-être`, `dit-il`, are split alike). For any other target there is
no paper figure to compare with, and for Chinese, Japanese or Korean the `13a`
tokens would be whole unsegmented sentences, so the number would mislead:
those are refused with a `ValueError` naming the language.
"""

import re

import sacrebleu
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from keras_transformer.evaluation.bleu_tokenizer import primary_language

PAPER_STYLE_LABEL = (
    "tokenized BLEU, 13a tokens + compound splitting (paper / tensor2tensor "
    "style, for comparison with Table 2 only; not a sacreBLEU score)"
)
_COMPOUND = re.compile(r"(\S)-(\S)")
_TOKENIZE = Tokenizer13a()
# Table 2's target languages (WMT 2014 En-De and En-Fr).
PAPER_STYLE_LANGUAGES = ("de", "fr")


def check_paper_style_language(target_language):
    """Raises a `ValueError` unless `target_language` is one of Table 2's.

    Args:
        target_language: str or `None`. A language code; its primary subtag
            must be `"de"` or `"fr"`.
    """
    if primary_language(target_language) not in PAPER_STYLE_LANGUAGES:
        raise ValueError(
            "Paper-style BLEU (13a tokens + compound splitting) is only defined "
            "for the paper's Table 2 target languages "
            f"({', '.join(PAPER_STYLE_LANGUAGES)}); use sacreBLEU's BLEU and chrF "
            f"for others. Received: target_language={target_language!r}"
        )


def split_compounds(text):
    """Rewrites `a-b` as `a ##AT##-##AT## b`, as `get_ende_bleu.sh` does.

    Like the Perl `s{(\\S)-(\\S)}{$1 ##AT##-##AT## $2}g`, matches do not
    overlap, so in `a-b-c` only the first hyphen is split.

    Args:
        text: str. Tokenized text.

    Returns:
        str.

    Examples:
        >>> split_compounds("a well-known fact")
        'a well ##AT##-##AT## known fact'
    """
    return _COMPOUND.sub(r"\1 ##AT##-##AT## \2", text)


def paper_style_bleu(hypotheses, references, target_language):
    """Corpus BLEU on tokenized, compound-split text (the paper's Table 2 style).

    Args:
        hypotheses: list of str, detokenized system outputs.
        references: list of str, one detokenized reference per hypothesis.
        target_language: str. The target language, `"de"` or `"fr"` (Table 2;
            see `check_paper_style_language`).

    Returns:
        float, BLEU in [0, 100].

    References:
        - [Papineni et al., 2002. BLEU: a Method for Automatic Evaluation of Machine
          Translation](https://aclanthology.org/P02-1040/).
        - [Post, 2018. A Call for Clarity in Reporting BLEU Scores](
          https://aclanthology.org/W18-6319/) (why tokenized BLEU is not comparable).
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), Table 2.

    Examples:
        >>> round(paper_style_bleu(["the cat sat ."], ["the cat sat ."], "de"), 2)
        100.0
    """
    check_paper_style_language(target_language)
    if len(hypotheses) != len(references):
        raise ValueError(
            "Expected one reference per hypothesis. Received: "
            f"len(hypotheses)={len(hypotheses)}, len(references)={len(references)}"
        )

    def prepare(texts):
        return [split_compounds(_TOKENIZE(text)) for text in texts]

    return sacrebleu.corpus_bleu(
        prepare(hypotheses), [prepare(references)], tokenize="none", force=True
    ).score
