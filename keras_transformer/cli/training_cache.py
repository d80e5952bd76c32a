"""A run's tokenized training cache (the third step of `prepare`): written
once under a temporary name and renamed when complete, then read by `train`."""

import dataclasses
import glob
import os

import keras

import pipelines


def cache_ready(run):
    """Whether the run's cache is complete (renamed into place)."""
    return os.path.exists(f"{run.cache_prefix}.index")


def write_cache(pairs, tokenizer, config, run, verbose=1):
    """Tokenizes `pairs` into the run's cache, renamed into place when complete.

    Args:
        pairs: `tf.data.Dataset` of `(source, target)` strings.
        tokenizer: the run's tokenizer.
        config: the run's `BatchingConfig` (its `cache` is the run's prefix).
        run: the `RunDirectory`.
        verbose: int. 0 silent, 1 a progress bar.
    """
    os.makedirs(os.path.dirname(run.cache_prefix), exist_ok=True)
    for stale in glob.glob(f"{run.cache_prefix}.partial*"):
        os.remove(stale)
    partial = f"{run.cache_prefix}.partial"
    config = dataclasses.replace(config, cache=partial)
    dataset = pipelines.make_dataset(pairs, tokenizer, config, training=False)
    progress = keras.utils.Progbar(None, unit_name="batch", verbose=verbose)
    for index, _ in enumerate(dataset):
        progress.update(index + 1)
    for path in glob.glob(f"{partial}*"):
        os.replace(path, run.cache_prefix + path[len(partial) :])
