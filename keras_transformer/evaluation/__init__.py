"""Evaluation: translate a test set with the decoding library and score it with
sacrebleu (corpus BLEU and chrF on detokenized output, always with the
sacreBLEU signatures; BLEU's tokenizer follows the target language, see
`bleu_tokenizer`), optionally also the paper's tokenized, compound-split BLEU
for comparison with Table 2 (German and French targets only); a callback
that logs dev BLEU and chrF during training; and the EVALB-compatible
labelled bracket scorer of constituency parses (§6.3: `evalb`, with its
parameter files as data, `EvalbParams`).

Tokenization is the caller's: functions here take batch functions,
`tokenize_fn(list of str) -> list of ids` and `detokenize_fn(list of ids) ->
list of str` (one call per batch, not per sentence: a TensorFlow tokenizer
called per sentence costs more than the search), so this package does not
depend on `pipelines`.
"""

from keras_transformer.evaluation.bleu_callback import BleuCallback
from keras_transformer.evaluation.bleu_tokenizer import bleu_tokenizer
from keras_transformer.evaluation.evalb import evalb
from keras_transformer.evaluation.evalb_params import EvalbParams
from keras_transformer.evaluation.evalb_results import (
    EvalbResult,
    EvalbSentence,
    EvalbSummary,
)
from keras_transformer.evaluation.evaluate import evaluate, translate_texts
from keras_transformer.evaluation.paper_style_bleu import (
    paper_style_bleu,
    split_compounds,
)
from keras_transformer.evaluation.score_translations import score_translations

__all__ = [
    "BleuCallback",
    "EvalbParams",
    "EvalbResult",
    "EvalbSentence",
    "EvalbSummary",
    "bleu_tokenizer",
    "evalb",
    "evaluate",
    "paper_style_bleu",
    "score_translations",
    "split_compounds",
    "translate_texts",
]
