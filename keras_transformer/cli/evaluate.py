"""`keras-transformer evaluate`: translate a held-out split and score it."""

from keras_transformer.cli.compute_dtypes import decodes_with_xla
from keras_transformer.cli.data import read_texts
from keras_transformer.cli.evaluation_files import (
    best_hypothesis_decoding,
    write_evaluation,
)
from keras_transformer.cli.run_tokenizer import detokenize_fn, source_ids_fn
from keras_transformer.cli.trained_model import load_trained_model
from keras_transformer.evaluation import evaluate as evaluate_translations


def evaluate(
    run_dir,
    split=None,
    weights=None,
    limit=None,
    decoding=None,
    paper_style=False,
    batch_size=64,
    verbose=1,
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
        weights: str or `None`. See `load_trained_model`.
        limit: int or `None`. Only the first `limit` sentences.
        decoding: dict or `None`. `DecodingConfig` fields that replace the
            recipe's `decoding` (whose defaults are the paper's, §6.1), e.g.
            `{"beam_size": 8}` or `{"method": "greedy"}`.
        paper_style: bool. Also the paper's tokenized, compound-split BLEU
            (German or French targets only).
        batch_size: int. Sentences per decoding batch.
        verbose: int.
        compute_dtype: str. `"float32"` (decoded with XLA) or `"bfloat16"`
            (in graph mode, `decodes_with_xla`); see `load_trained_model`.
            Recorded in `eval/<split>.json`.

    Returns:
        The scores dict (as written to `eval/<split>.json`).
    """
    recipe, tokenizer, model, weights = load_trained_model(
        run_dir, weights, task=None, compute_dtype=compute_dtype
    )
    if recipe.task == "parsing":
        from keras_transformer.cli.parse import evaluate_parses

        return evaluate_parses(
            run_dir,
            recipe,
            tokenizer,
            model,
            weights,
            split,
            limit,
            decoding,
            batch_size,
            verbose,
        )
    split = split or recipe.test_split
    sources, references = read_texts(recipe, split, limit)
    config = best_hypothesis_decoding(recipe, decoding)
    result = score_translations(
        recipe,
        tokenizer,
        model,
        sources,
        references,
        config,
        paper_style=paper_style,
        print_fn=print if verbose else None,
        batch_size=batch_size,
        progress=bool(verbose),
        jit_compile=decodes_with_xla(model),
    )
    scores = {key: value for key, value in result.items() if key != "hypotheses"}
    scores["target_language"] = recipe.target_language
    return write_evaluation(
        run_dir,
        split,
        result["hypotheses"],
        scores,
        weights,
        config,
        model.compute_dtype,
    )


def score_translations(
    recipe, tokenizer, model, sources, references, config, **options
):
    """`keras_transformer.evaluation.evaluate` of a run's model on `sources`,
    as `evaluate` runs it, writing nothing: the export's path from text to
    ids (truncation included, so that BLEU scores what a served model
    returns), the recipe's target language for BLEU's tokenizer. `options`
    are `evaluate`'s (`batch_size`, `print_fn`, `jit_compile`, ...).

    Returns:
        `evaluate`'s dict (scores, signatures and `hypotheses`).
    """
    return evaluate_translations(
        model,
        sources,
        references,
        source_ids_fn(tokenizer, recipe.max_train_length),
        detokenize_fn(tokenizer),
        config=config,
        target_language=recipe.target_language,
        width_multiple=16,  # fewer distinct widths: fewer XLA compilations
        **options,
    )
