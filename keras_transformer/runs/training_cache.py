"""A run's tokenized training cache (the third step of `prepare`), in shards,
then read by `train`.

The training corpus is streamed once: every `shard_pairs` lines become one
shard, decoded and cleaned (`pipelines.decode_pairs`), tokenized and filtered
(`pipelines.write_token_shard`). A shard's file is renamed into place when
complete and its counts by reason written beside it (`.json`) after it, so a
killed `prepare` resumes at the first shard without counts, and memory holds
one shard at a time whatever the corpus size. `shards.json`, written last,
lists the shards and marks the cache complete; `train` reads them in
parallel (`pipelines.read_token_cache`).
"""

import glob
import os
from collections import Counter

import keras

import pipelines
from keras_transformer.runs.user_error import UserError
from keras_transformer.training.atomic_files import atomic_write_json, read_json

# Lines per shard: about 10-20 MB of text in memory while one is written.
SHARD_PAIRS = 100_000
MANIFEST = "shards.json"


def cache_ready(run):
    """Whether the run's cache is complete."""
    return os.path.exists(os.path.join(run.cache_dir, MANIFEST))


def cache_shards(run):
    """The paths of the complete cache's shards, in corpus order."""
    if not cache_ready(run):
        raise UserError(
            f"{run.path} has no complete training cache; run `keras-transformer "
            "prepare` first."
        )
    manifest = read_json(os.path.join(run.cache_dir, MANIFEST))
    return [os.path.join(run.cache_dir, name) for name in manifest["shards"]]


def write_cache(
    corpus,
    tokenizer,
    config,
    run,
    on_bad_line="skip",
    shard_pairs=SHARD_PAIRS,
    total=None,
    verbose=1,
    target_tokenizer=None,
):
    """Tokenizes `corpus` into the run's cache, shard by shard (resumable).

    Args:
        corpus: a `pipelines.ParallelCorpus` or `DatasetCorpus`.
        tokenizer: the run's tokenizer.
        config: the run's `BatchingConfig` (its length and ratio limits).
        run: the `RunDirectory`.
        on_bad_line: `"skip"` or `"fail"`, as `pipelines.decode_pairs`.
        shard_pairs: int. Lines per shard.
        total: int or `None`. Lines in all, for the progress bar.
        verbose: int. 0 silent, 1 a progress bar.
        target_tokenizer: the target's own tokenizer (parsing), or `None`.

    Returns:
        The `pipelines.FilterReport` of the whole corpus.
    """
    os.makedirs(run.cache_dir, exist_ok=True)
    for stale in glob.glob(os.path.join(run.cache_dir, "*.partial")):
        os.remove(stale)
    totals = Counter()
    shards = []
    progress = keras.utils.Progbar(total, unit_name="line", verbose=verbose)
    lines = 0
    raw = corpus.raw_pairs()
    for index, chunk in enumerate(
        pipelines.text.parallel_corpus.chunks(raw, shard_pairs)
    ):
        path = os.path.join(run.cache_dir, f"shard-{index:05d}.tfrecord")
        counts_path = f"{path}.json"
        if os.path.exists(counts_path) and os.path.exists(path):
            counts = Counter(read_json(counts_path))
        else:
            counts = Counter()
            pairs = list(
                pipelines.decode_pairs(chunk, corpus.origin, on_bad_line, counts)
            )
            counts.update(
                pipelines.write_token_shard(
                    pairs,
                    tokenizer,
                    config,
                    path,
                    on_bad_line,
                    corpus.origin,
                    target_tokenizer=target_tokenizer,
                )
            )
            atomic_write_json(dict(counts), counts_path)
        totals.update(counts)
        shards.append(os.path.basename(path))
        lines += len(chunk)
        progress.update(lines)
    report = pipelines.FilterReport.from_counts(dict(totals))
    manifest = {"shards": shards, "shard_pairs": shard_pairs, "lines": lines}
    atomic_write_json(manifest, os.path.join(run.cache_dir, MANIFEST))
    return report


def read_cache(run):
    """The cached training pairs, `(source_ids, target_in_ids,
    target_out_ids)`, for `pipelines.batch_tokenized`."""
    return pipelines.read_token_cache(cache_shards(run))
