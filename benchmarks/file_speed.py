"""`parse --input` and `translate --input` as a user runs them: whole
processes, process start, imports, loading and compilation included, with an
empty compile cache and again with the cache the first process filled. One
JSON line each:

    python benchmarks/file_speed.py --parse-run RUNS/gum --translate-run RUNS/demo
        [--beams 1 4] [--compute-dtypes auto float32] [--phases]

- `command`: the console script (`keras-transformer parse|translate --run-dir
  RUN --input FILE --output OUT --beam-size B [--compute-dtype D]`) timed
  from outside, `cache` `cold` (an empty package cache folder,
  `KERAS_TRANSFORMER_CACHE`, whose `xla/` holds the compile cache) then
  `warm` (the same folder, a second process). The parse input is the
  491 sentences of the bundled GUM test split; the translation input the
  run's test split (1,810 sentences for the demo). `--input -` (stdin) rows
  (`input: "stdin"`, float32) take the XLA search (`parsing.parser.
  search_mode`: an input of unknown length), whose compilations the cache
  keeps. Each row has the output's F1 (parse, EVALB-compatible, gold tags) or
  BLEU and chrF (translate), so that a faster setting shows what it changes.
- `phases` (`--phases`): the same work in one child process with a clock
  between its steps (imports, loading the run, the first pass over the
  input, a second, warm pass with the same parser or translator): where a
  whole process spends its time, and the warm rate a second process is
  compared with.

Nothing else may run on the machine meanwhile (BUILD_NOTES.md, "Measuring on
this machine"); the CPU's model name is in every line.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from keras_transformer.package_cache import CACHE_ENV  # noqa: E402
from keras_transformer.precisions import cpu_fields  # noqa: E402 (no TensorFlow)

# The child of `--phases`: argv = task, run, input, output, beam, dtype.
PHASES = r"""
import json, os, sys, time
start = time.perf_counter()
task, run, source, output, beam, dtype = sys.argv[1:7]
overrides = {"beam_size": int(beam)}
if task == "parse":
    from keras_transformer import Parser as Kind
    options = {"lines": sum(1 for _ in open(source, encoding="utf-8"))}
else:
    from keras_transformer import Translator as Kind
    options = {}
import tensorflow  # what the package imports when it loads a run
imported = time.perf_counter()
searcher = Kind.from_run(run, compute_dtype=dtype, **options)
loaded = time.perf_counter()
work = searcher.parse_file if task == "parse" else searcher.translate_file
work(source, output, **overrides)
first = time.perf_counter()
work(source, output, **overrides)
warm = time.perf_counter()
print(json.dumps({
    "import_s": imported - start, "load_s": loaded - imported,
    "first_pass_s": first - loaded, "warm_pass_s": warm - first,
    "search": getattr(searcher, "mode", None),
}))
"""


def write_inputs(args, folder):
    """`{task: (input file, references or gold)}` for the tasks asked."""
    inputs = {}
    if args.parse_run:
        from pipelines import load_bundled_trees

        gold, _ = load_bundled_trees("test")
        path = os.path.join(folder, "gum_test.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(" ".join(tree.words()) + "\n" for tree in gold)
        inputs["parse"] = (path, gold)
    if args.translate_run:
        from keras_transformer.runs.run_data import read_texts
        from keras_transformer.runs.run_directory import RunDirectory

        recipe = RunDirectory(args.translate_run).read_recipe()
        sources, references = read_texts(recipe, recipe.test_split)
        path = os.path.join(folder, "translate_test.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(f"{line}\n" for line in sources)
        inputs["translate"] = (path, references)
    return inputs


def run_command(task, run, source, output, beam, dtype, cache, stdin=False):
    """Wall seconds of one whole `keras-transformer` process."""
    command = ["keras-transformer", task, "--run-dir", run, "--output", output]
    command += ["--beam-size", str(beam)]
    if dtype != "default":
        command += ["--compute-dtype", dtype]
    if not stdin:
        command += ["--input", source]
    env = {**os.environ, CACHE_ENV: cache}
    env.pop("TF_XLA_FLAGS", None)
    with open(source, "rb") as f:
        start = time.perf_counter()
        done = subprocess.run(
            command,
            stdin=f if stdin else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=env,
        )
        seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return seconds


def run_phases(task, run, source, output, beam, dtype, cache):
    env = {**os.environ, CACHE_ENV: cache}
    env.pop("TF_XLA_FLAGS", None)
    dtype = "auto" if dtype == "default" else dtype  # the command's default
    done = subprocess.run(
        [sys.executable, "-c", PHASES, task, run, source, output, str(beam), dtype],
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode != 0:
        raise SystemExit(f"phases of {task} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def quality(task, output, truth):
    """F1 of parsed trees against the gold trees, or BLEU and chrF."""
    with open(output, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if task == "parse":
        import pipelines
        from keras_transformer.parsing import bracket_scores

        scores = bracket_scores(truth, [pipelines.parse_tree(t) for t in lines])
        return {"f1": scores["f1"]}
    import sacrebleu

    return {
        "bleu": round(sacrebleu.corpus_bleu(lines, [truth]).score, 2),
        "chrf": round(sacrebleu.corpus_chrf(lines, [truth]).score, 2),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parse-run", help="A trained parsing run.")
    parser.add_argument("--translate-run", help="A trained translation run.")
    parser.add_argument("--beams", type=int, nargs="+", default=[1, 4])
    parser.add_argument(
        "--compute-dtypes",
        nargs="+",
        default=["default", "float32"],
        choices=["default", "auto", "float32", "bfloat16"],
        help="`default`: no --compute-dtype (the command's default, auto).",
    )
    parser.add_argument(
        "--no-stdin", action="store_true", help="Leave out the XLA (stdin) rows."
    )
    parser.add_argument("--phases", action="store_true")
    args = parser.parse_args()
    if not shutil.which("keras-transformer"):
        raise SystemExit("The console script keras-transformer is not installed.")
    cpu = cpu_fields().get("model name")
    base = {"benchmark": "file_speed", "cpu": cpu, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as folder:
        inputs = write_inputs(args, folder)
        runs = {"parse": args.parse_run, "translate": args.translate_run}
        results = []
        for task, (source, truth) in inputs.items():
            sentences = sum(1 for _ in open(source, encoding="utf-8"))
            settings = [(dtype, False) for dtype in args.compute_dtypes]
            if task == "parse" and not args.no_stdin:
                settings.append(("float32", True))
            for beam in args.beams:
                for dtype, stdin in settings:
                    cache = tempfile.mkdtemp(dir=folder)
                    for state in ("cold", "warm"):
                        output = os.path.join(folder, f"{task}.out")
                        seconds = run_command(
                            task, runs[task], source, output, beam, dtype, cache, stdin
                        )
                        line = base | {
                            "measure": "command",
                            "task": task,
                            "beam_size": beam,
                            "compute_dtype": dtype,
                            "input": "stdin" if stdin else "file",
                            "cache": state,
                            "sentences": sentences,
                            "seconds": round(seconds, 2),
                            "sentences_per_second": round(sentences / seconds, 2),
                        }
                        results.append((line, output, task, truth))
                        shutil.copy(output, f"{output}.{len(results)}")
                        print(json.dumps(line), flush=True)
                    if args.phases and not stdin:
                        phases = run_phases(
                            task, runs[task], source, output, beam, dtype, cache
                        )
                        line = base | {
                            "measure": "phases",
                            "task": task,
                            "beam_size": beam,
                            "compute_dtype": dtype,
                            "sentences": sentences,
                            **{
                                k: round(v, 2) if k != "search" else v
                                for k, v in phases.items()
                            },
                            "warm_sentences_per_second": round(
                                sentences / phases["warm_pass_s"], 2
                            ),
                        }
                        print(json.dumps(line), flush=True)
        # Quality last: scoring imports what the timed processes import.
        for number, (line, output, task, truth) in enumerate(results, 1):
            scores = quality(task, f"{output}.{number}", truth)
            keys = ("task", "beam_size", "compute_dtype", "input", "cache")
            print(
                json.dumps(
                    base | {"measure": "quality"} | {k: line[k] for k in keys} | scores
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
