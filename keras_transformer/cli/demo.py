"""`keras-transformer demo`: the whole life cycle on the bundled corpus.

Train a small Transformer on the bundled LibreOffice help (English -> German)
for a bounded time, average the last checkpoints (§6.1), score the held-out
test split with sacreBLEU (the recipe's decoding: the paper's beam 4, alpha
0.6, §6.1), export the SavedModel, reload it
and translate a few test sentences through its `serving_default` signature.
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

    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the SavedModel's tokenizer ops)

    # Evenly spaced over the test split (it is in page order), not picked.
    all_sources, all_references = read_texts(recipe, recipe.test_split)
    count = len(all_sources)
    picks = [k * count // examples + count // (2 * examples) for k in range(examples)]
    picks = picks if examples > 0 else []
    sources = [all_sources[i] for i in picks]
    references = [all_references[i] for i in picks]
    served = tf.saved_model.load(export_path).signatures["serving_default"]
    translations = served(text=tf.constant(sources))["translations"].numpy()
    shown = [
        {"source": s, "reference": r, "translation": t[0].decode("utf-8")}
        for s, r, t in zip(sources, references, translations, strict=True)
    ]
    rates = history.get("tokens_per_second", [])
    report = {
        "corpus": f"{recipe.dataset} {recipe.source_language}-{recipe.target_language}",
        "test_split": recipe.test_split,
        "test_sentences": scores["sentences"],
        "bleu": round(scores["bleu"], 2),
        "bleu_signature": scores["bleu_signature"],
        "chrf": round(scores["chrf"], 2),
        "chrf_signature": scores["chrf_signature"],
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
        "examples": shown,
    }
    atomic_write_json(report, os.path.join(output, "report.json"))
    if verbose:
        print()
        source, target = (
            (language or side).upper()
            for language, side in (
                (recipe.source_language, "src"),
                (recipe.target_language, "out"),
            )
        )
        for example in shown:
            print(f"{source}:".ljust(5) + example["source"])
            print(f"{target}:".ljust(5) + example["translation"])
            print(f"REF: {example['reference']}\n")
        summary = {k: report[k] for k in ("bleu", "chrf", "steps", "wall_seconds")}
        print(json.dumps(summary))
        print(f"sacreBLEU signatures: BLEU {report['bleu_signature']}")
        print(f"                      chrF {report['chrf_signature']}")
        print(f"Wrote {output}/: checkpoints/, averaged/, eval/, export/, report.json")
    return report
