"""`keras-transformer prepare`: the tokenizer and the tokenized training cache."""

import dataclasses
import os

import keras

import pipelines
from keras_transformer.cli.batching_plan import batching_plan
from keras_transformer.cli.data import load_pairs
from keras_transformer.cli.run_directory import RunDirectory
from keras_transformer.cli.run_tokenizer import load_run_tokenizer, train_tokenizer
from keras_transformer.cli.training_cache import cache_ready, write_cache
from keras_transformer.training.atomic_files import atomic_write_json


def prepare(recipe, run_dir, verbose=1):
    """Writes the run's recipe, tokenizer and tokenized training cache.

    One pass, each step owned by one module: read the data (`cli.data`), train
    or load the tokenizer (`cli.run_tokenizer`), write the cache
    (`cli.training_cache`) and count what the length filter drops under the
    batching plan (`cli.batching_plan`). Idempotent: an existing tokenizer is
    reused (and must match the recipe's vocabulary), and an existing cache is
    kept. The cache is written under a temporary name and renamed when
    complete, so an interrupted prepare leaves nothing half-written behind.
    The filter report (`run.filter_report_path`) comes last: other workers of
    a multi-worker run wait for it (`train.wait_until_prepared`).

    Args:
        recipe: a `Recipe`.
        run_dir: str. The run directory (created if needed).
        verbose: int. 0 silent, 1 progress and summary.

    Returns:
        The `RunDirectory`.
    """
    run = RunDirectory(run_dir)
    run.write_recipe(recipe)
    pairs = load_pairs(recipe, recipe.train_split)
    if os.path.exists(run.tokenizer_path):
        tokenizer = load_run_tokenizer(run, recipe.seed)
    else:
        if verbose:
            print(f"Training a {recipe.vocab_size}-token {recipe.tokenizer} vocabulary")
        keras.utils.set_random_seed(recipe.seed)  # before the tokenizer exists
        tokenizer = train_tokenizer(recipe, pairs)
        tokenizer.save(run.tokenizer_path)
    if verbose:
        print(f"Tokenizer: {run.tokenizer_path} ({tokenizer.vocab_size} tokens)")
    config, _ = batching_plan(recipe, run)
    if not cache_ready(run):
        write_cache(pairs, tokenizer, config, run, verbose)
    if os.path.exists(run.filter_report_path):
        return run
    report = pipelines.count_filtered(pairs, tokenizer, config)
    atomic_write_json(dataclasses.asdict(report), run.filter_report_path)
    if verbose:
        print(f"\nTraining pairs: {report}")
    return run
