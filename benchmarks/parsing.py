"""Parsing (§6.3) on the bundled GUM test split: F1 of a trained run and of
the two baselines, parse speed, the repair rate. One JSON line per measure:

    python benchmarks/parsing.py --run-dir runs/gum [--limit 491] [--beams 21 1]

- `baseline`: F1 (all, len <= 40) of the flat and right-branching trees
  (`pipelines.tree_baselines`), with the training trees' most frequent
  labels; the same scorer as the run's (EVALB-compatible, `COLLINS.prm`,
  gold tags on `XX` leaves).
- `run`: for each beam size, F1, recall, precision, exact match, the share of
  sentences whose output needed a repair, and sentences/s of
  `cli.parse.parse_sentences` (search, de-linearization; the model loaded
  before the clock starts): `sentences_per_second` of a whole call, which
  compiles the search for each batch shape it meets as `keras-transformer
  parse` does, and `second_call_sentences_per_second` of another, which
  compiles again (the search is not kept across calls).

No other parser is installed on this machine to time side by side; the
baselines are the F1 reference. The GUM trees are silver trees: F1 on them is
not comparable with WSJ section 23 (Table 4).
"""

import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from keras_transformer.cli.parse import (  # noqa: E402
    baseline_scores,
    bracket_scores,
    load_parser,
    parse_sentences,
)
from keras_transformer.recipes import get_recipe  # noqa: E402
from pipelines import load_bundled_trees  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", required=True, help="A trained parsing run.")
    parser.add_argument("--limit", type=int, help="Only the first N test trees.")
    parser.add_argument("--beams", type=int, nargs="+", default=[21, 1])
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    # No `tune_memory()`: `keras-transformer parse` and `evaluate` leave
    # glibc's mmap threshold dynamic (`cli.main.MEMORY_TUNED_COMMANDS`).
    gold, _ = load_bundled_trees("test")
    gold = gold[: args.limit] if args.limit else gold
    for name, scores in baseline_scores(get_recipe("gum_parsing"), gold).items():
        line = {"benchmark": "parsing", "measure": "baseline", "baseline": name}
        print(json.dumps(line | scores | {"sentences": len(gold)}))
    sentences = [" ".join(tree.words()) for tree in gold]
    for beam in args.beams:
        overrides = {"beam_size": beam}
        recipe, tokenizer, target, model, weights, config = load_parser(
            args.run_dir, overrides=overrides
        )
        # Two whole calls, each as one `keras-transformer parse` run:
        # `parse_sentences` compiles its search again for each batch shape
        # it meets, in every call.
        times = []
        for _ in range(2):
            start = time.monotonic()
            trees, repairs = parse_sentences(
                recipe, tokenizer, target, model, sentences, config, args.batch_size
            )
            times.append(time.monotonic() - start)
        line = {
            "benchmark": "parsing",
            "measure": "run",
            "run_dir": args.run_dir,
            "weights": weights,
            "beam_size": beam,
            "alpha": config.alpha,
            "max_extra_length": config.max_extra_length,
            "sentences": len(sentences),
            "sentences_per_second": round(len(sentences) / times[0], 2),
            "second_call_sentences_per_second": round(len(sentences) / times[1], 2),
            "repaired_share": round(
                sum(1 for r in repairs if r.total) / max(1, len(repairs)), 4
            ),
            "cpus": os.cpu_count(),
        }
        print(json.dumps(line | bracket_scores(gold, trees)), flush=True)


if __name__ == "__main__":
    main()
