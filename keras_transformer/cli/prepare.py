"""`keras-transformer prepare`: the tokenizer and the tokenized training cache."""

import dataclasses
import glob
import os

import keras

import pipelines
from keras_transformer.cli.data import load_pairs, load_run_tokenizer, train_tokenizer
from keras_transformer.cli.run_directory import RunDirectory
from keras_transformer.training.atomic_files import atomic_write_json


def batching_config(recipe, run, tokens_per_batch, num_replicas=1, static=False):
    """The recipe's `BatchingConfig`, reading the run's tokenized cache."""
    return pipelines.BatchingConfig(
        tokens_per_batch=tokens_per_batch,
        max_length=recipe.max_length,
        bucket_scale=recipe.bucket_scale,
        num_replicas=num_replicas,
        static_shapes=static,
        seed=recipe.seed,
        cache=run.cache_prefix,
    )


def cache_ready(run):
    return os.path.exists(f"{run.cache_prefix}.index")


def prepare(recipe, run_dir, verbose=1):
    """Writes the run's recipe, tokenizer and tokenized training cache.

    Idempotent: an existing tokenizer is reused (and must match the recipe's
    vocabulary), and an existing cache is kept. The cache is written under a
    temporary name and renamed when complete, so an interrupted prepare
    leaves nothing half-written behind. The filter report
    (`run.filter_report_path`) comes last: other workers of a multi-worker
    run wait for it (`train.wait_until_prepared`).

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
    if not cache_ready(run):
        _write_cache(recipe, run, pairs, tokenizer, verbose)
    if os.path.exists(run.filter_report_path):
        return run
    report = pipelines.count_filtered(
        pairs, tokenizer, batching_config(recipe, run, recipe.tokens_per_batch)
    )
    atomic_write_json(dataclasses.asdict(report), run.filter_report_path)
    if verbose:
        print(f"\nTraining pairs: {report}")
    return run


def _write_cache(recipe, run, pairs, tokenizer, verbose):
    """Tokenizes `pairs` into the run's cache, renamed into place when complete."""
    os.makedirs(os.path.dirname(run.cache_prefix), exist_ok=True)
    for stale in glob.glob(f"{run.cache_prefix}.partial*"):
        os.remove(stale)
    partial = f"{run.cache_prefix}.partial"
    config = dataclasses.replace(
        batching_config(recipe, run, recipe.tokens_per_batch), cache=partial
    )
    dataset = pipelines.make_dataset(pairs, tokenizer, config, training=False)
    progress = keras.utils.Progbar(None, unit_name="batch", verbose=verbose)
    for index, _ in enumerate(dataset):
        progress.update(index + 1)
    for path in glob.glob(f"{partial}*"):
        os.replace(path, run.cache_prefix + path[len(partial) :])
