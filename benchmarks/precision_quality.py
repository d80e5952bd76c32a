"""BLEU and decoding time of a trained run in float32, bfloat16 and with
Keras' int8 weights, side by side in one process.

Loads a run's averaged weights (else its newest checkpoint) and translates
its test split as `keras-transformer evaluate` does (the recipe's beam
search, the export's text-to-ids path, batches of 64), once per
`--precisions` entry, and prints one JSON line: {"run_dir", "weights",
"sentences", "jit_compile", "<precision>": {"bleu", "chrf", "seconds"} for
each, "bleu_change": {"<precision>": its BLEU minus float32's},
"int8_kernels", "bleu_signature", "keras"}. Nothing is written to the run
directory.

- `float32`: the model as trained.
- `bfloat16`: `load_run(compute_dtype="bfloat16")`, what
  `--compute-dtype bfloat16` gives `translate`, `evaluate` and `export`:
  Keras' `bfloat16` policy, the float32 weights rounded to bfloat16 on
  loading, bfloat16 compute and decoding caches.
- `int8`: `model.quantize("int8")`, which stores the kernels of every
  `Dense` and `EinsumDense` layer (attention projections, feed-forward
  layers) in int8 with per-output-channel scales and quantizes their inputs
  on the fly. The tied embedding and output projection
  (`ScaledReversibleEmbedding`) stay float32: Keras quantizes
  `ReversibleEmbedding` itself, not subclasses, and forcing it
  (`type_check=False`) gave wrong logits (docs/experiment-log.md, "Side by side with
  CTranslate2"). Not offered by the command line: it is not faster here.

Every precision decodes with XLA, as `evaluate` does for float32;
`--graph` decodes all in graph mode instead, as the export does (and as
`evaluate` does for bfloat16, which XLA's CPU backend runs without AMX).

    python benchmarks/precision_quality.py --run-dir keras-transformer-demo
    python benchmarks/precision_quality.py --run-dir keras-transformer-demo --graph
"""

import argparse
import json
import os
import time
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# The package's oneDNN default, set by its owner before keras (and so
# TensorFlow) is imported.
from keras_transformer.process_defaults import set_onednn_default  # noqa: E402

set_onednn_default()

import keras  # noqa: E402

from keras_transformer.process_defaults import tune_memory  # noqa: E402
from keras_transformer.runs.evaluation_files import (  # noqa: E402
    best_hypothesis_decoding,
)
from keras_transformer.runs.loaded_run import load_run  # noqa: E402
from keras_transformer.runs.run_data import read_texts  # noqa: E402
from keras_transformer.translation.translation_evaluation import (  # noqa: E402
    score_translations,
)

tune_memory()

PRECISIONS = ("float32", "bfloat16", "int8")


def load_model(run_dir, precision):
    """The run, loaded (`LoadedRun`), its model in `precision`."""
    compute_dtype = "bfloat16" if precision == "bfloat16" else "float32"
    loaded = load_run(run_dir, "translation", compute_dtype=compute_dtype)
    model = loaded.model
    if precision == "int8":
        with warnings.catch_warnings():
            # "Layer X does not have a `quantize` method": the layers
            # without kernels, and the embedding (see the docstring).
            warnings.simplefilter("ignore")
            model.quantize("int8")
    return loaded


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--graph", action="store_true")
    parser.add_argument(
        "--precisions", nargs="+", default=list(PRECISIONS), choices=PRECISIONS
    )
    args = parser.parse_args()

    results = {}
    int8_kernels = None
    for precision in args.precisions:
        loaded = load_model(args.run_dir, precision)
        recipe, weights = loaded.recipe, loaded.weights
        sources, references = read_texts(recipe, recipe.test_split, args.limit)
        start = time.perf_counter()
        result = score_translations(
            loaded,
            sources,
            references,
            best_hypothesis_decoding(recipe),
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
        if precision == "int8":
            int8_kernels = sum(v.dtype == "int8" for v in loaded.model.weights)
    changes = {
        precision: round(results[precision]["bleu"] - results["float32"]["bleu"], 2)
        for precision in results
        if precision != "float32" and "float32" in results
    }
    print(
        json.dumps(
            {
                "run_dir": args.run_dir,
                "weights": weights,
                "sentences": len(sources),
                "jit_compile": not args.graph,
                **results,
                "bleu_change": changes,
                "int8_kernels": int8_kernels,
                "bleu_signature": signature,
                "keras": keras.__version__,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
