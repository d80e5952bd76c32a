"""BLEU and decoding time of a trained run in float32 and with Keras' int8
weights, side by side in one process.

Loads a run's averaged weights (else its newest checkpoint), translates its
test split as `keras-transformer evaluate` does (the recipe's beam search,
the export's text-to-ids path, batches of 64), once with the float32 model
and once after `model.quantize("int8")` of the same model, and prints
one JSON line: {"run_dir", "weights", "sentences", "float32": {"bleu",
"chrf", "seconds"}, "int8": {...}, "bleu_change", "int8_layers",
"bleu_signature"}. Nothing is written to the run directory.

`model.quantize("int8")` stores the kernels of every `Dense` and
`EinsumDense` layer (attention projections, feed-forward layers) in int8
with per-output-channel scales and quantizes their inputs on the fly. The
tied embedding and output projection (`ScaledReversibleEmbedding`) stay
float32: Keras quantizes `ReversibleEmbedding` itself, not subclasses, and
forcing it (`type_check=False`) gave wrong logits (BUILD_NOTES.md, "Side by
side with CTranslate2"). Both decode with XLA, as `evaluate` does;
`--graph` decodes in graph mode instead (where the int8 kernels are slower
than float32, `benchmarks/decoding_speed.py --modes graph graph_int8`).

    python benchmarks/int8_quality.py --run-dir keras-transformer-demo
"""

import argparse
import json
import os
import time
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

import keras  # noqa: E402

from keras_transformer.cli.data import read_texts  # noqa: E402
from keras_transformer.cli.evaluate import (  # noqa: E402
    best_hypothesis_decoding,
    score_translations,
)
from keras_transformer.cli.trained_model import load_trained_model  # noqa: E402
from keras_transformer.process_defaults import tune_memory  # noqa: E402

tune_memory()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--graph", action="store_true")
    args = parser.parse_args()

    recipe, tokenizer, model, weights = load_trained_model(args.run_dir)
    split = recipe.test_split
    sources, references = read_texts(recipe, split, args.limit)
    config = best_hypothesis_decoding(recipe)
    results = {}
    for precision in ("float32", "int8"):
        if precision == "int8":  # the float32 pass is done: quantize in place
            with warnings.catch_warnings():
                # "Layer X does not have a `quantize` method": the layers
                # without kernels, and the embedding (see the docstring).
                warnings.simplefilter("ignore")
                model.quantize("int8")
        start = time.perf_counter()
        result = score_translations(
            recipe,
            tokenizer,
            model,
            sources,
            references,
            config,
            print_fn=None,
            batch_size=64,
            jit_compile=not args.graph,
        )
        results[precision] = {
            "bleu": round(result["bleu"], 2),
            "chrf": round(result["chrf"], 2),
            "seconds": round(time.perf_counter() - start, 1),
        }
        signature = result["bleu_signature"]
    int8_layers = sorted(
        {
            type(layer).__name__
            for layer in model._flatten_layers()
            if getattr(layer, "quantization_mode", None) == "int8"
        }
    )
    print(
        json.dumps(
            {
                "run_dir": args.run_dir,
                "weights": weights,
                "sentences": len(sources),
                "jit_compile": not args.graph,
                **results,
                "bleu_change": round(
                    results["int8"]["bleu"] - results["float32"]["bleu"], 2
                ),
                "int8_layers": int8_layers,
                "bleu_signature": signature,
                "keras": keras.__version__,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
