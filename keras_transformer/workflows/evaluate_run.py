"""Evaluate: a run's model on a held-out split, scored as its task is
(sacreBLEU for translation, EVALB-compatible F1 for parsing)."""

from keras_transformer.parsing.parse_evaluation import evaluate_parses
from keras_transformer.runs.loaded_run import load_run
from keras_transformer.translation.translation_evaluation import (
    evaluate_translations_of_run,
)


def evaluate(
    run_dir,
    split=None,
    weights=None,
    limit=None,
    decoding=None,
    paper_style=False,
    batch_size=64,
    verbose=0,
    compute_dtype="float32",
):
    """Translates a split of the run's data and scores it with sacreBLEU.

    Writes `eval/<split>.json` (BLEU, chrF, their sacreBLEU signatures, the
    target language, the weights and decoding settings) and
    `eval/<split>.txt` (one translation per line, in the split's order).
    BLEU's tokenizer follows the recipe's `target_language` (`13a` when it is
    `None`; `zh`, `ja-mecab`, `ko-mecab` for Chinese, Japanese, Korean), and
    the printed and written BLEU signature names it.

    Args:
        run_dir: str. The run directory.
        split: str or `None`. Defaults to the recipe's `test_split`.
        weights: str or `None`. See `load_run`.
        limit: int or `None`. Only the first `limit` sentences.
        decoding: dict or `None`. `DecodingConfig` fields that replace the
            recipe's `decoding` (whose defaults are the paper's, §6.1), e.g.
            `{"beam_size": 8}` or `{"method": "greedy"}`.
        paper_style: bool. Also the paper's tokenized, compound-split BLEU
            (German or French targets only).
        batch_size: int. Sentences per decoding batch.
        verbose: int.
        compute_dtype: str. `"float32"` (decoded with XLA) or `"bfloat16"`
            (in graph mode, `decodes_with_xla`); see `load_run`.
            Recorded in `eval/<split>.json`.

    Returns:
        The scores dict (as written to `eval/<split>.json`).
    """
    loaded = load_run(run_dir, weights, compute_dtype=compute_dtype)
    if loaded.task == "parsing":
        return evaluate_parses(loaded, split, limit, decoding, batch_size, verbose)
    return evaluate_translations_of_run(
        loaded, split, limit, decoding, paper_style, batch_size, verbose
    )
