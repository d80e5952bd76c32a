"""What `evaluate` writes and searches with, for both tasks: the decoding of
a scored evaluation (one hypothesis) and the `eval/<split>` files, shared by
translation's (`translation.translation_evaluation`) and parsing's
(`parsing.parse_evaluation`) evaluation."""

import dataclasses
import os

from keras_transformer.decoding.bracket_constraint import one_beam_as_greedy
from keras_transformer.runs.run_directory import RunDirectory
from keras_transformer.training import record_path
from keras_transformer.training.atomic_files import (
    atomic_write_json,
    atomic_write_text,
    read_json,
)


def best_hypothesis_decoding(recipe, overrides=None):
    """The recipe's `DecodingConfig` with `overrides`, one hypothesis: scoring
    reads the best, so the recipe's n-best is not read; a parser's one beam
    is greedy search (`one_beam_as_greedy`)."""
    base = dataclasses.replace(recipe.decoding, n_best=1)
    return one_beam_as_greedy(base.with_overrides(**(overrides or {})))


def write_evaluation(
    run_dir, split, outputs, scores, weights, config, compute_dtype="float32"
):
    """Writes `eval/<split>.txt` (one output per line, in the split's order)
    and `eval/<split>.json` (`scores` plus the split, sentence count,
    weights, their step, the decoding settings and the model's compute
    dtype); returns the latter."""
    run = RunDirectory(run_dir)
    os.makedirs(run.join("eval"), exist_ok=True)
    text = "".join(f"{line}\n" for line in outputs)
    atomic_write_text(text, run.join("eval", f"{split}.txt"))
    weights_record = record_path(weights)
    scores = dict(scores) | {
        "split": split,
        "sentences": len(outputs),
        "weights": weights,
        "step": read_json(weights_record).get("step")
        if os.path.exists(weights_record)
        else None,
        "decoding": config.to_dict(),
        "compute_dtype": compute_dtype,
    }
    atomic_write_json(scores, run.join("eval", f"{split}.json"))
    return scores
