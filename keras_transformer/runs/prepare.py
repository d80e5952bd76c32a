"""`keras-transformer prepare`: the tokenizer and the tokenized training cache."""

import dataclasses
import os
import time

import keras

import pipelines
from keras_transformer.runs.batching_plan import batching_plan
from keras_transformer.runs.run_data import corpus, training_pairs
from keras_transformer.runs.run_directory import RunDirectory
from keras_transformer.runs.run_lock import run_lock
from keras_transformer.runs.run_tokenizer import (
    load_run_tokenizer,
    load_target_tokenizer,
    train_target_tokenizer,
    train_tokenizer,
)
from keras_transformer.runs.source_files import record_sources, training_pairs_count
from keras_transformer.runs.training_cache import (
    SHARD_PAIRS,
    cache_ready,
    write_cache,
)
from keras_transformer.runs.user_error import UserError
from keras_transformer.training.atomic_files import atomic_write_json


def prepare(recipe, run_dir, verbose=0, shard_pairs=SHARD_PAIRS):
    """Writes the run's recipe, tokenizer and tokenized training cache.

    One streaming pass per step, each step owned by one module: record and
    check the data files (`runs.source_files`: a line-count mismatch fails
    here, before any work), train or load the tokenizer on a bounded sample
    (`runs.run_tokenizer`), then clean, tokenize and filter the corpus into
    the sharded cache (`runs.training_cache`), counting every pair skipped by
    reason. The corpus never sits in memory whole. Idempotent and resumable:
    an existing tokenizer is reused (and must match the recipe's vocabulary),
    complete shards are kept. The filter report (`run.filter_report_path`)
    comes last: other workers of a multi-worker run wait for it
    (`train.wait_until_prepared`).

    Args:
        recipe: a `Recipe`.
        run_dir: str. The run directory (created if needed).
        verbose: int. 0 silent, 1 progress and summary.
        shard_pairs: int. Lines per cache shard.

    Returns:
        The `RunDirectory`.

    Raises:
        UserError: a data file changed since the run was prepared, a bad
            line under `on_bad_line="fail"` (file and line named), another
            process working in `run_dir` (`runs.run_lock`), ...
    """
    with run_lock(run_dir):
        return _prepare(recipe, run_dir, verbose, shard_pairs)


def _prepare(recipe, run_dir, verbose, shard_pairs):
    run = RunDirectory(run_dir)
    run.check_recipe(recipe)  # a refused recipe records no files
    record = record_sources(recipe, run)  # a bad file fails before any work
    run.write_recipe(recipe)
    if os.path.exists(run.filter_report_path) and cache_ready(run):
        return run
    data = corpus(recipe, recipe.train_split)
    parsing = recipe.task == "parsing"
    if parsing and verbose:
        print(f"Trees: {data.report}")
    try:
        if os.path.exists(run.tokenizer_path):
            tokenizer = load_run_tokenizer(run, recipe.seed)
        else:
            if verbose:
                print(
                    f"Training a {recipe.vocab_size}-token {recipe.tokenizer} "
                    "vocabulary"
                )
            keras.utils.set_random_seed(recipe.seed)  # before the tokenizer exists
            pairs = training_pairs(recipe, data)
            if parsing:  # the source's words only: the target is symbols
                pairs = ((source, "") for source, _ in pairs)
            begin = time.monotonic()
            tokenizer = train_tokenizer(recipe, pairs)
            tokenizer.save(run.tokenizer_path)
            if verbose:
                print(f"Trained in {time.monotonic() - begin:.1f} s")
        target_tokenizer = None
        if parsing and os.path.exists(run.target_tokenizer_path):
            target_tokenizer = load_target_tokenizer(run, recipe)
        elif parsing:
            target_tokenizer = train_target_tokenizer(
                recipe, training_pairs(recipe, data)
            )
            target_tokenizer.save(run.target_tokenizer_path)
        if parsing and verbose:
            print(
                f"Target symbols: {run.target_tokenizer_path} "
                f"({target_tokenizer.vocab_size} tokens)"
            )
        if verbose:
            print(f"Tokenizer: {run.tokenizer_path} ({tokenizer.vocab_size} tokens)")
        config, _ = batching_plan(recipe)
        report = write_cache(
            data,
            tokenizer,
            config,
            run,
            on_bad_line=recipe.on_bad_line,
            shard_pairs=shard_pairs,
            total=len(data.trees) if parsing else _line_count(data, record),
            verbose=verbose,
            target_tokenizer=target_tokenizer,
        )
    except pipelines.BadLineError as error:
        raise UserError(
            f"{error} (--on-bad-line skip drops and counts such pairs)"
        ) from None
    atomic_write_json(dataclasses.asdict(report), run.filter_report_path)
    if verbose:
        print(f"\nTraining pairs: {report}")
        print(f"Pairs by reason: {run.filter_report_path}")
    return run


def _line_count(data, record):
    """The training corpus's lines, the cache bar's total: from the files'
    record, else counted by a pass over the files (the bundled corpora; a
    TFDS split's size is not known ahead)."""
    count = training_pairs_count(record)
    if count is None and isinstance(data, pipelines.ParallelCorpus):
        count = sum(part[0].lines for part in data.scan())
    return count
