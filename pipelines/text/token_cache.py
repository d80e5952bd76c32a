"""A tokenized, filtered training corpus on disk, in shards of TFRecords.

A WMT-size corpus is tokenized once (`write_token_shard`, one shard per call,
so that a caller can write them one by one and resume after an interruption)
and read by training in parallel (`read_token_cache`, `TFRecordDataset` with
parallel reads). Each record is one pair: the raw bytes (`tf.io.decode_raw`,
little-endian on every platform TensorFlow runs on) of the int32 vector
`[len(source_ids), *source_ids, *target_ids]`, where the source
ids end with eos (`encode_sources`) and the target ids are the pieces only
(`add_target_special_ids` adds bos and eos when read).

Pairs the token-level filter drops (`filter_reason`: an empty side, a side
over `max_train_length`, a ratio over `max_length_ratio`) are not written;
they are counted, or, under `on_bad_line="fail"`, refused naming their file
and line.
"""

import os
from collections import Counter

import numpy as np
import tensorflow as tf

from pipelines.text import transforms
from pipelines.text.batching_config import BatchingConfig
from pipelines.text.filter_report import FILTER_REASONS, filter_reasons
from pipelines.text.parallel_corpus import bad_line, check_on_bad_line
from pipelines.tokenizers.encode_sources import encode_sources


def write_token_shard(
    pairs,
    tokenizer,
    config: BatchingConfig,
    path: str,
    on_bad_line: str = "skip",
    origin=None,
    target_tokenizer=None,
) -> Counter:
    """Tokenizes and filters `pairs` into the TFRecord file `path`.

    The file is written under `path + ".partial"` and renamed when complete,
    so `path` exists only whole.

    Args:
        pairs: list of `(line_id, source, target)` (str sides, from
            `pipelines.text.parallel_corpus.decode_pairs`).
        tokenizer: the shared tokenizer (§5.1), or the source's.
        config: `BatchingConfig`; its `max_train_length`, `max_length_ratio`
            and `tokenize_batch_size` are read.
        path: str. The shard's file.
        on_bad_line: `"skip"` (count) or `"fail"` (raise at the first pair the
            filter drops, in line order). Defaults to `"skip"`.
        origin: `fn(line_id) -> str` naming a pair's file and line, for the
            error. Defaults to the line id.
        target_tokenizer: the target's own tokenizer (parsing's whole-token
            symbols, §6.3), or `None` for the shared one's `target_side()`.

    Returns:
        A `Counter` of the pairs by `FILTER_REASONS` name (`"kept"` included).

    Raises:
        pipelines.text.parallel_corpus.BadLineError: under `"fail"`.
    """
    check_on_bad_line(on_bad_line)
    origin = origin or str
    counts = Counter()
    partial = f"{path}.partial"
    with tf.io.TFRecordWriter(partial) as writer:
        batches = _tokenized_batches(pairs, tokenizer, target_tokenizer, config)
        for start, batch in batches:
            source_ids, target_ids, reasons = batch
            for code, number in zip(
                *np.unique(reasons, return_counts=True), strict=True
            ):
                counts[FILTER_REASONS[code]] += int(number)
            dropped = np.flatnonzero(reasons)
            if on_bad_line == "fail" and dropped.size:
                line_id, source, target = pairs[start + dropped[0]]
                raise bad_line(
                    FILTER_REASONS[reasons[dropped[0]]], origin(line_id), source, target
                )
            source_flat, source_splits = source_ids
            target_flat, target_splits = target_ids
            for i in np.flatnonzero(reasons == 0):
                source = source_flat[source_splits[i] : source_splits[i + 1]]
                target = target_flat[target_splits[i] : target_splits[i + 1]]
                length = np.array([len(source)], np.int32)
                writer.write(np.concatenate([length, source, target]).tobytes())
    os.replace(partial, path)
    return counts


def _tokenized_batches(pairs, tokenizer, target_tokenizer, config):
    """Yields `(start, ((flat, splits) source ids, (flat, splits) target
    pieces, reason codes))` numpy batches of `pairs` in order, tokenized in
    parallel (`tf.data`), the sources through `encode_sources` (pieces, then
    eos)."""
    if not pairs:
        return
    _, sources, targets = zip(*pairs, strict=True)

    def tokenize(sources, targets):
        source_ids = encode_sources(tokenizer, sources)
        target_ids = (target_tokenizer or tokenizer.target_side()).tokenize(targets)
        reasons = filter_reasons(
            source_ids.row_lengths(),
            target_ids.row_lengths() + 1,  # + bos
            config.max_train_length,
            config.max_length_ratio,
        )
        return (
            (source_ids.flat_values, source_ids.row_splits),
            (target_ids.flat_values, target_ids.row_splits),
            reasons,
        )

    size = config.tokenize_batch_size
    dataset = (
        tf.data.Dataset.from_tensor_slices((list(sources), list(targets)))
        .batch(size)
        .map(tokenize, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
        .prefetch(tf.data.AUTOTUNE)
    )
    for index, batch in enumerate(dataset.as_numpy_iterator()):
        yield index * size, batch


def read_token_cache(paths) -> tf.data.Dataset:
    """The pairs of the shards `paths`, as `make_dataset` has them after its
    filter: `(source_ids, target_in_ids, target_out_ids)` int32 vectors.

    Shards are read in parallel (deterministic interleaving); batch the result
    with `pipelines.batch_tokenized`.

    Args:
        paths: iterable of str or path-like. The shards (`write_token_shard`).

    Returns:
        A `tf.data.Dataset` of `(source_ids, target_in_ids, target_out_ids)`.

    Raises:
        ValueError: `paths` is empty.
    """
    paths = [os.fspath(path) for path in paths]
    if not paths:
        raise ValueError("read_token_cache needs at least one shard. Received: []")
    records = tf.data.TFRecordDataset(
        paths, num_parallel_reads=min(len(paths), 8) if len(paths) > 1 else None
    )

    def parse(record):
        vector = tf.io.decode_raw(record, tf.int32)
        length = vector[0]
        return vector[1 : 1 + length], vector[1 + length :]

    pairs = records.map(parse, num_parallel_calls=tf.data.AUTOTUNE)
    return pairs.apply(transforms.add_target_special_ids())
