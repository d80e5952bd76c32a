"""`keras-transformer demo`: the whole life cycle on the bundled corpus.

Train a small Transformer on the bundled LibreOffice help (English -> German)
for a bounded time, average the last checkpoints (§6.1), score the held-out
test split with sacreBLEU (the recipe's decoding: the paper's beam 4, alpha
0.6, §6.1), export the SavedModel, reload it
and translate a few test sentences through its `serving_default` signature.
With `--task parsing` the same on the bundled GUM trees (§6.3, the
`gum_parsing` recipe): F1 on the test split beside the flat and
right-branching baselines, and a few test sentences parsed by the export.
Everything runs offline on the data shipped with the package.
"""

import dataclasses
import json
import os
import time

from keras_transformer.cli.average import average
from keras_transformer.cli.data import read_texts
from keras_transformer.cli.evaluate import evaluate
from keras_transformer.cli.export import export
from keras_transformer.cli.train import train
from keras_transformer.training.atomic_files import atomic_write_json

# `demo --task`: the recipe each task runs.
DEMO_RECIPES = {"translation": "demo", "parsing": "gum_parsing"}


def run_demo(
    recipe,
    output,
    test_sentences=None,
    examples=5,
    verbose=1,
):
    """Runs the demo recipe in `output` and writes `output/report.json`.

    A second call with the same `output` resumes training from the backup
    for another `recipe.train_minutes`, then evaluates and exports again (a
    new export version).

    Args:
        recipe: a `Recipe` (normally `get_recipe("demo")`).
        output: str. The run directory.
        test_sentences: int or `None`. Score only the first N test sentences.
        examples: int. Test sentences translated by the reloaded export,
            evenly spaced over the split.
        verbose: int.

    Returns:
        The report dict.
    """
    start = time.monotonic()
    trained = train(recipe, output, verbose=verbose)
    history = trained["history"]
    averaged = average(output, verbose=verbose)
    scores = evaluate(output, weights=averaged, limit=test_sentences, verbose=verbose)
    export_path = export(output, weights=averaged, verbose=verbose)

    import tensorflow_text  # noqa: F401  (the SavedModel's tokenizer ops)

    if recipe.task == "parsing":
        report = _parsing_report(recipe, scores, test_sentences, examples, export_path)
    else:
        report = _translation_report(recipe, scores, examples, export_path)
    rates = history.get("tokens_per_second", [])
    report |= {
        "steps": trained["steps"],
        "parameters": trained["model"].count_params(),
        "train_tokens_per_second": round(sum(rates) / len(rates), 1) if rates else None,
        "train_minutes": recipe.train_minutes,
        "wall_seconds": round(time.monotonic() - start, 1),
        "checkpoints": os.path.join(output, "checkpoints"),
        "averaged_weights": averaged,
        "export": export_path,
        "recipe": {
            key: value
            for key, value in dataclasses.asdict(recipe).items()
            if key != "description"
        },
    }
    atomic_write_json(report, os.path.join(output, "report.json"))
    if verbose:
        _print_report(recipe, report, output)
    return report


def _picks(count, examples):
    """`examples` indices evenly spaced over `count` (not picked by hand)."""
    if examples <= 0:
        return []
    return [k * count // examples + count // (2 * examples) for k in range(examples)]


def _translation_report(recipe, scores, examples, export_path):
    import tensorflow as tf

    # Evenly spaced over the test split (it is in page order), not picked.
    all_sources, all_references = read_texts(recipe, recipe.test_split)
    picks = _picks(len(all_sources), examples)
    sources = [all_sources[i] for i in picks]
    references = [all_references[i] for i in picks]
    served = tf.saved_model.load(export_path).signatures["serving_default"]
    translations = served(text=tf.constant(sources))["translations"].numpy()
    shown = [
        {"source": s, "reference": r, "translation": t[0].decode("utf-8")}
        for s, r, t in zip(sources, references, translations, strict=True)
    ]
    return {
        "task": "translation",
        "corpus": f"{recipe.dataset} {recipe.source_language}-{recipe.target_language}",
        "test_split": recipe.test_split,
        "test_sentences": scores["sentences"],
        "bleu": round(scores["bleu"], 2),
        "bleu_signature": scores["bleu_signature"],
        "chrf": round(scores["chrf"], 2),
        "chrf_signature": scores["chrf_signature"],
        "examples": shown,
    }


def _parsing_report(recipe, scores, test_sentences, examples, export_path):
    import tensorflow as tf

    from keras_transformer.cli.data import split_trees
    from keras_transformer.cli.parse import baseline_scores

    gold, _ = split_trees(recipe, recipe.test_split)
    gold = gold[:test_sentences] if test_sentences else gold
    picks = _picks(len(gold), examples)
    sentences = [" ".join(gold[i].words()) for i in picks]
    served = tf.saved_model.load(export_path).signatures["serving_default"]
    trees = served(text=tf.constant(sentences, tf.string))["trees"].numpy()
    shown = [
        {"sentence": s, "reference": str(gold[i]), "tree": t.decode("utf-8")}
        for s, i, t in zip(sentences, picks, trees, strict=True)
    ]
    return {
        "task": "parsing",
        "corpus": f"{recipe.dataset} (silver trees)",
        "test_split": recipe.test_split,
        "test_sentences": scores["sentences"],
        "f1": round(scores["f1"], 2),
        "f1_len_40": round(scores["f1_len_40"], 2),
        "recall": round(scores["recall"], 2),
        "precision": round(scores["precision"], 2),
        "repaired_outputs": scores["repaired_outputs"],
        "baselines": baseline_scores(recipe, gold),
        "examples": shown,
    }


def _print_report(recipe, report, output):
    print()
    if report["task"] == "parsing":
        for example in report["examples"]:
            print(f"IN:  {example['sentence']}")
            print(f"OUT: {example['tree']}")
            print(f"REF: {example['reference']}\n")
        baselines = report["baselines"]
        summary = {
            "f1": report["f1"],
            "flat_f1": baselines["flat"]["f1"],
            "right_branching_f1": baselines["right_branching"]["f1"],
            "steps": report["steps"],
            "wall_seconds": report["wall_seconds"],
        }
        print(json.dumps(summary))
        print(
            "EVALB-compatible F1 (COLLINS.prm) on the GUM test split, silver "
            "trees: not comparable with WSJ section 23."
        )
    else:
        source, target = (
            (language or side).upper()
            for language, side in (
                (recipe.source_language, "src"),
                (recipe.target_language, "out"),
            )
        )
        for example in report["examples"]:
            print(f"{source}:".ljust(5) + example["source"])
            print(f"{target}:".ljust(5) + example["translation"])
            print(f"REF: {example['reference']}\n")
        summary = {k: report[k] for k in ("bleu", "chrf", "steps", "wall_seconds")}
        print(json.dumps(summary))
        print(f"sacreBLEU signatures: BLEU {report['bleu_signature']}")
        print(f"                      chrF {report['chrf_signature']}")
    print(f"Wrote {output}/: checkpoints/, averaged/, eval/, export/, report.json")
