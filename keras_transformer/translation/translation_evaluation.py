"""Scoring a translation run's translations of a held-out split with
sacreBLEU (BLEU and chrF, their signatures), as `evaluate` writes them."""

from keras_transformer.evaluation import evaluate as evaluate_translations
from keras_transformer.runs.compute_dtypes import decodes_with_xla
from keras_transformer.runs.evaluation_files import (
    best_hypothesis_decoding,
    write_evaluation,
)
from keras_transformer.runs.run_data import read_texts
from keras_transformer.runs.run_tokenizer import detokenize_fn, source_ids_fn


def evaluate_translations_of_run(
    loaded, split, limit, decoding, paper_style, batch_size, verbose
):
    """`evaluate` of a translation run (a `LoadedRun`): translates a split's
    sources, scores them against its references and writes
    `eval/<split>.json` and `.txt`; returns the scores."""
    recipe = loaded.recipe
    split = split or recipe.test_split
    sources, references = read_texts(recipe, split, limit)
    config = best_hypothesis_decoding(recipe, decoding)
    result = score_translations(
        loaded,
        sources,
        references,
        config,
        paper_style=paper_style,
        print_fn=print if verbose else None,
        batch_size=batch_size,
        progress=bool(verbose),
        jit_compile=decodes_with_xla(loaded.model),
    )
    scores = {key: value for key, value in result.items() if key != "hypotheses"}
    scores["target_language"] = recipe.target_language
    return write_evaluation(
        loaded.run.path,
        split,
        result["hypotheses"],
        scores,
        loaded.weights,
        config,
        loaded.model.compute_dtype,
    )


def score_translations(loaded, sources, references, config, **options):
    """`keras_transformer.evaluation.evaluate` of a `LoadedRun` on `sources`,
    as `evaluate` runs it, writing nothing: the export's path from text to
    ids (truncation included, so that BLEU scores what a served model
    returns), the recipe's target language for BLEU's tokenizer. `options`
    are `evaluate`'s (`batch_size`, `print_fn`, `jit_compile`, ...).

    Returns:
        `evaluate`'s dict (scores, signatures and `hypotheses`).
    """
    return evaluate_translations(
        loaded.model,
        sources,
        references,
        source_ids_fn(loaded.tokenizer, loaded.recipe.max_train_length),
        detokenize_fn(loaded.tokenizer),
        config=config,
        target_language=loaded.recipe.target_language,
        width_multiple=16,  # fewer distinct widths: fewer XLA compilations
        **options,
    )
