"""Evaluation: translate a test set with the decoding library and score it with
sacrebleu (corpus BLEU and chrF on detokenized output, always with the
sacreBLEU signatures; BLEU's tokenizer follows the target language, see
`bleu_tokenizer`), optionally also the paper's tokenized, compound-split BLEU
for comparison with Table 2 (German and French targets only); and a callback
that logs dev BLEU and chrF during training.

Tokenization is the caller's: functions here take `tokenize_fn(str) -> ids` and
`detokenize_fn(ids) -> str`, so this package does not depend on `pipelines`.
"""

from keras_transformer.evaluation.bleu_callback import BleuCallback
from keras_transformer.evaluation.bleu_tokenizer import bleu_tokenizer
from keras_transformer.evaluation.evaluate import evaluate, translate_texts
from keras_transformer.evaluation.paper_style_bleu import (
    paper_style_bleu,
    split_compounds,
)
from keras_transformer.evaluation.score_translations import score_translations

__all__ = [
    "BleuCallback",
    "bleu_tokenizer",
    "evaluate",
    "paper_style_bleu",
    "score_translations",
    "split_compounds",
    "translate_texts",
]
