"""Parsing (§6.3) on the bundled GUM test split: F1 of a trained run and of
the two baselines, parse speed, the repair rate. One JSON line per measure:

    python benchmarks/parsing.py --run-dir runs/gum [--beams 1 4]
        [--batch-tokens 4096] [--batch-size 64] [--compute-dtype float32]
        [--searches xla graph]

- `baseline`: F1 (all, len <= 40) of the flat and right-branching trees
  (`pipelines.trees.tree_baselines`), with the training trees' most frequent
  labels; the same scorer as the run's (EVALB-compatible, `COLLINS.prm`,
  the gold tags on every leaf, `parsing.with_gold_tags`).
- `run`: for each beam size (beam 1 is greedy search) and search, F1,
  recall, precision, exact match and the repairs of one pass, of
  `keras-transformer parse`'s path (`Parser.from_run`,
  `Parser.parse_file`: length-sorted batches within `--batch-tokens` tree symbols,
  a power of two of sentences each, the search compiled once per process:
  per batch shape with XLA, or once for every shape in graph mode,
  `--searches xla graph`, between which `parse` chooses by the input's
  length; with `--export`, also the export (`Parser.from_export`: its
  `parse_beam_K` signature of the beam size), `search`
  "export"), and its sentences/s (search and de-linearization; the model
  loaded before the clock starts): `sentences_per_second` of a first pass
  over the split, which compiles (a short `parse` run pays that), and
  `warm_sentences_per_second` of a second pass in the same process, every
  shape compiled (a long run's rate). `same_trees_as_one_call` compares its
  trees with one `parse_sentences` call in batches of 64 (`evaluate`'s
  path).

No other parser is installed on this machine to time side by side; the
baselines are the F1 reference. The GUM trees are silver trees: F1 on them is
not comparable with WSJ section 23 (Table 4).
"""

import argparse
import json
import os
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pipelines  # noqa: E402
from keras_transformer.parsing import (  # noqa: E402
    Parser,
    baseline_scores,
    bracket_scores,
    parse_sentences,
)
from keras_transformer.recipes import get_recipe  # noqa: E402
from keras_transformer.runs import load_run  # noqa: E402
from keras_transformer.runs.evaluation_files import (  # noqa: E402
    best_hypothesis_decoding,
)
from pipelines import load_bundled_trees  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", required=True, help="A trained parsing run.")
    parser.add_argument("--limit", type=int, help="Only the first N test trees.")
    parser.add_argument("--beams", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--batch-tokens", type=int, nargs="+", default=[4096])
    parser.add_argument("--batch-size", type=int, nargs="+", default=[64])
    parser.add_argument(
        "--compute-dtype", default="float32", choices=["float32", "bfloat16"]
    )
    parser.add_argument(
        "--searches", nargs="+", default=["xla", "graph"], choices=["xla", "graph"]
    )
    parser.add_argument(
        "--export",
        help="Also time this export of the run (its `parse_beam_K` "
        "signature, the same batches): `parse --export`'s path.",
    )
    args = parser.parse_args()
    # No `tune_memory()`: `keras-transformer parse` and `evaluate` leave
    # glibc's mmap threshold dynamic (the command line's `MEMORY_TUNED_COMMANDS`).
    gold, _ = load_bundled_trees("test")
    gold = gold[: args.limit] if args.limit else gold
    for name, scores in baseline_scores(get_recipe("gum_parsing"), gold).items():
        line = {"benchmark": "parsing", "measure": "baseline", "baseline": name}
        print(json.dumps(line | scores | {"sentences": len(gold)}))
    sentences = [" ".join(tree.words()) for tree in gold]
    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, "test.txt")
        with open(source, "w", encoding="utf-8") as f:
            f.writelines(f"{sentence}\n" for sentence in sentences)
        for beam in args.beams:
            overrides = {"beam_size": beam}
            if beam == 1:
                overrides["method"] = "greedy"
            reference = one_call_trees(args.run_dir, overrides, sentences)
            settings = [
                (search, batch_tokens, batch_size)
                for search in [*args.searches, *(["export"] if args.export else [])]
                for batch_tokens in args.batch_tokens
                for batch_size in args.batch_size
            ]
            for setting in settings:
                line = measure(args, source, overrides, setting, gold)
                trees = line.pop("trees")
                line["same_trees_as_one_call"] = trees == reference
                print(json.dumps(line), flush=True)


def one_call_trees(run_dir, overrides, sentences):
    """The trees of one `parse_sentences` call (`evaluate`'s path)."""
    loaded = load_run(run_dir, task="parsing")
    config = best_hypothesis_decoding(loaded.recipe, overrides)
    trees, _ = parse_sentences(loaded, sentences, config)
    return [str(tree) for tree in trees]


def measure(args, source, overrides, setting, gold):
    """Two passes of `Parser.parse_file` with one parser; the JSON line (with
    the trees, under "trees")."""
    search, batch_tokens, batch_size = setting
    if search == "export":
        parser = Parser.from_export(args.export)
    else:
        parser = Parser.from_run(
            args.run_dir, compute_dtype=args.compute_dtype, search=search
        )
    decoding = parser.decoding_with(**overrides)
    times = []
    for number in range(2):
        output = os.path.join(os.path.dirname(source), f"trees{number}.txt")
        start = time.monotonic()
        parser.parse_file(
            source,
            output,
            batch_tokens=batch_tokens,
            batch_size=batch_size,
            **overrides,
        )
        times.append(time.monotonic() - start)
    with open(output, encoding="utf-8") as f:
        trees = f.read().splitlines()
    count = len(trees)
    return {
        "benchmark": "parsing",
        "measure": "run",
        "run_dir": args.run_dir,
        "method": decoding.method,
        "beam_size": decoding.beam_size,
        "alpha": decoding.alpha,
        "compute_dtype": args.compute_dtype,
        "search": parser.mode or "export",
        "batch_tokens": batch_tokens,
        "batch_size": batch_size,
        "sentences": count,
        "sentences_per_second": round(count / times[0], 2),
        "warm_sentences_per_second": round(count / times[1], 2),
        "repairs": parser.repairs // 2,
        "cpus": os.cpu_count(),
        **bracket_scores(gold, [pipelines.parse_tree(tree) for tree in trees]),
        "trees": trees,
    }


if __name__ == "__main__":
    main()
