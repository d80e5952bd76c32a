"""`keras-transformer evaluate`: translate a held-out split and score it."""

import os

from keras_transformer.cli.data import detokenize_fn, read_texts, source_ids_fn
from keras_transformer.cli.run_directory import RunDirectory
from keras_transformer.cli.trained_model import load_trained_model
from keras_transformer.evaluation import evaluate as evaluate_translations
from keras_transformer.training.atomic_files import atomic_write_json, read_json


def evaluate(
    run_dir,
    split=None,
    weights=None,
    limit=None,
    method="beam",
    beam_size=None,
    alpha=None,
    paper_style=False,
    batch_size=64,
    verbose=1,
):
    """Translates a split of the run's data and scores it with sacreBLEU.

    Writes `eval/<split>.json` (BLEU, chrF, their sacreBLEU signatures, the
    weights and decoding settings) and `eval/<split>.txt` (one translation
    per line, in the split's order).

    Args:
        run_dir: str. The run directory.
        split: str or `None`. Defaults to the recipe's `test_split`.
        weights: str or `None`. See `load_trained_model`.
        limit: int or `None`. Only the first `limit` sentences.
        method: `"beam"` or `"greedy"`.
        beam_size, alpha: `None` for the recipe's (§6.1: 4, 0.6).
        paper_style: bool. Also the paper's tokenized, compound-split BLEU.
        batch_size: int. Sentences per decoding batch.
        verbose: int.

    Returns:
        The scores dict (as written to `eval/<split>.json`).
    """
    recipe, tokenizer, model, weights = load_trained_model(run_dir, weights)
    split = split or recipe.test_split
    sources, references = read_texts(recipe, split, limit)
    decode = {"method": method, "max_extra_length": recipe.max_extra_length}
    if method == "beam":
        decode.update(
            beam_size=beam_size or recipe.beam_size,
            alpha=recipe.alpha if alpha is None else alpha,
        )
    result = evaluate_translations(
        model,
        sources,
        references,
        source_ids_fn(tokenizer),
        detokenize_fn(tokenizer),
        paper_style=paper_style,
        print_fn=print if verbose else None,
        batch_size=batch_size,
        width_multiple=16,  # fewer distinct widths: fewer XLA compilations
        **decode,
    )
    run = RunDirectory(run_dir)
    os.makedirs(run.join("eval"), exist_ok=True)
    with open(run.join("eval", f"{split}.txt"), "w") as f:
        f.writelines(f"{line}\n" for line in result["hypotheses"])
    record_path = weights.replace(".weights.h5", ".json")
    scores = {key: value for key, value in result.items() if key != "hypotheses"} | {
        "split": split,
        "sentences": len(sources),
        "weights": weights,
        "step": read_json(record_path).get("step")
        if os.path.exists(record_path)
        else None,
        "decoding": decode,
    }
    atomic_write_json(scores, run.join("eval", f"{split}.json"))
    return scores
