"""Small `Dataset -> Dataset` transformations, composed by `pipeline.py`.

Each function returns a callable for `tf.data.Dataset.apply`. Elements flow as:

    (source, target)                          scalar tf.string
    -> (source_ids, target_ids)               int32 [S], [T']    tokenize_pairs
    -> (source_ids, target_in, target_out)    int32 [S], [T], [T]
                                                         add_target_special_ids
    -> same, filtered                                             filter_by_length
    -> same, batched and padded with 0        [B, S], [B, T], [B, T]
                                                                  bucket_by_token_budget
    -> ({"source_ids", "target_ids"}, target_out) or ((.., ..), ..) to_model_inputs
"""

from collections.abc import Callable

import tensorflow as tf

from pipelines.text.bucketing import pair_batch_sizes
from pipelines.text.filter_report import filter_reason
from pipelines.tokenizers.encode_sources import encode_sources
from pipelines.tokenizers.special_tokens import BOS_ID, EOS_ID, PAD_ID

Transform = Callable[[tf.data.Dataset], tf.data.Dataset]
AUTOTUNE = tf.data.AUTOTUNE


def tokenize_pairs(
    tokenizer, target_tokenizer=None, batch_size: int = 1024
) -> Transform:
    """Tokenizes `(source, target)` strings in the graph, `batch_size` at a time.

    Sources go through `encode_sources` (pieces, then eos; no truncation: the
    length filter drops long pairs and counts them), the one text-to-ids path
    that evaluation, translation and the export share; targets are pieces
    only (`add_target_special_ids` adds bos and eos).

    Args:
        tokenizer: a tokenizer with `tokenize(strings) -> RaggedTensor`.
        target_tokenizer: optional separate target tokenizer; defaults to the
            shared `tokenizer`'s `target_side()` (§5.1's shared vocabulary).
        batch_size: int. Sentences per tokenizer call (vectorised, far faster
            than one call per sentence). Defaults to `1024`.
    """
    target_tokenizer = target_tokenizer or tokenizer.target_side()

    def tokenize(sources, targets):
        return encode_sources(tokenizer, sources), target_tokenizer.tokenize(targets)

    def apply(dataset):
        dataset = dataset.batch(batch_size)
        dataset = dataset.map(tokenize, num_parallel_calls=AUTOTUNE)
        return dataset.unbatch()  # ragged [n, (N)] -> [N] per pair, order kept

    return apply


def add_target_special_ids() -> Transform:
    """Makes target_in = bos + target, target_out = target + eos (teacher
    forcing: the decoder reads target_in, predicts target_out). The source
    keeps its ids, which already end with eos (`encode_sources`)."""
    bos = tf.constant([BOS_ID], tf.int32)
    eos = tf.constant([EOS_ID], tf.int32)

    def add(source_ids, target_ids):
        return (
            source_ids,  # [S]
            tf.concat([bos, target_ids], 0),  # [T]
            tf.concat([target_ids, eos], 0),  # [T]
        )

    return lambda dataset: dataset.map(add, num_parallel_calls=AUTOTUNE)


def filter_by_length(
    max_length: int, max_length_ratio: float | None = None
) -> Transform:
    """Drops pairs with an empty side, a side over `max_length` tokens or (if
    given) a length ratio over `max_length_ratio` (`filter_reason`).

    Use `pipelines.count_filtered` to count the dropped pairs by reason.
    """

    def keep(source_ids, target_in_ids, target_out_ids):
        reason = filter_reason(source_ids, target_in_ids, max_length, max_length_ratio)
        return reason == 0

    return lambda dataset: dataset.filter(keep)


def shuffle(buffer_size: int, seed: int | None) -> Transform:
    """Seeded shuffle, a new order every epoch."""
    return lambda dataset: dataset.shuffle(
        buffer_size, seed=seed, reshuffle_each_iteration=True
    )


def bucket_by_token_budget(
    bucket_lengths: list[int], batch_sizes: list[int], static_shapes: bool = False
) -> Transform:
    """Groups pairs by their two lengths and batches each group to its budget.

    Each side picks its own bucket: `i` is the first bucket whose length is
    >= len(source_ids), `j` the first >= len(target_in_ids). Pairs with the
    same bucket pair `(i, j)` are batched together, `batch_sizes[max(i, j)]`
    at a time (the longer padded side, `bucket_lengths[max(i, j)]`, sets the
    budget). By default each side is padded to its longest sequence in the
    batch. With `static_shapes` the source is padded to `bucket_lengths[i]`,
    the target to `bucket_lengths[j]`, and the last, partial batch of a bucket
    pair gets empty rows (all padding) up to the pair's batch size, so every
    batch of a bucket pair has one shape, `(batch_sizes[max(i, j)],
    bucket_lengths[i], bucket_lengths[j])`: a bounded set of shapes for XLA
    and TPUs (`pipelines.batch_shapes` lists those of a corpus). Empty rows
    carry no target token, so the loss, its gradient and the token counts
    ignore them. Either way an epoch yields every pair once.

    Args:
        bucket_lengths: list of int. Increasing; the last is the filter's
            `max_length` (longer pairs must be filtered out before).
        batch_sizes: list of int. Batch size of each bucket length, as from
            `token_budget_batch_sizes`.
        static_shapes: bool. Defaults to `False`.
    """
    if len(batch_sizes) != len(bucket_lengths):
        raise ValueError(
            "batch_sizes must have one entry per bucket length. Received: "
            f"len(batch_sizes)={len(batch_sizes)}, "
            f"len(bucket_lengths)={len(bucket_lengths)}"
        )
    num_buckets = len(bucket_lengths)
    padded_lengths = tf.constant(bucket_lengths, tf.int64)  # [N]
    sizes = tf.constant(pair_batch_sizes(batch_sizes), tf.int64)  # [N*N]
    key = bucket_pair_key(bucket_lengths)

    def window_size(key):
        return tf.gather(sizes, key)

    def batch(key, window):
        if static_shapes:
            source_length = tf.gather(padded_lengths, key // num_buckets)
            target_length = tf.gather(padded_lengths, key % num_buckets)
            shapes = ([source_length], [target_length], [target_length])
        else:
            shapes = ([None], [None], [None])
        batches = window.padded_batch(
            window_size(key),
            padded_shapes=shapes,
            padding_values=(tf.constant(PAD_ID, tf.int32),) * 3,
        )  # [B, S], [B, T], [B, T]
        if not static_shapes:
            return batches
        size = window_size(key)

        def fill(*sides):  # a partial batch's empty rows, at its end
            rows = [[0, size - tf.shape(sides[0], tf.int64)[0]], [0, 0]]
            return tuple(tf.pad(side, rows, constant_values=PAD_ID) for side in sides)

        return batches.map(fill)

    return lambda dataset: dataset.group_by_window(
        key, batch, window_size_func=window_size
    )


def bucket_pair_key(bucket_lengths: list[int]):
    """The function `(source_ids, target_in_ids, target_out_ids) -> int64 key`
    of `bucket_by_token_budget`: `i * N + j` for the source's bucket `i` and
    the target's `j`, each the first of the `N` bucket lengths >= the side's
    length. A side longer than the last bucket fails (filter first)."""
    num_buckets = len(bucket_lengths)
    lengths = tf.constant(bucket_lengths, tf.int32)  # [N]

    def bucket_index(ids):
        # First bucket length >= len(ids); N if longer than the last bucket.
        index = tf.searchsorted(lengths, tf.shape(ids)[:1], side="left")[0]
        check = tf.debugging.assert_less(
            index,
            num_buckets,
            message="a sequence is longer than the last bucket length; "
            "apply filter_by_length(bucket_lengths[-1]) before bucketing",
        )
        with tf.control_dependencies([check]):
            return tf.identity(index)

    def key(source_ids, target_in_ids, target_out_ids):
        i, j = bucket_index(source_ids), bucket_index(target_in_ids)
        return tf.cast(i * num_buckets + j, tf.int64)

    return key


def to_model_inputs(element_format: str = "dict") -> Transform:
    """Packs batches as `({"source_ids", "target_ids"}, target_out_ids)`
    (`"dict"`, what the Transformer takes) or `((source_ids, target_in_ids),
    target_out_ids)` (`"tuple"`)."""

    def as_dict(source_ids, target_in_ids, target_out_ids):
        return {"source_ids": source_ids, "target_ids": target_in_ids}, target_out_ids

    def as_tuple(source_ids, target_in_ids, target_out_ids):
        return (source_ids, target_in_ids), target_out_ids

    packer = as_dict if element_format == "dict" else as_tuple
    return lambda dataset: dataset.map(packer, num_parallel_calls=AUTOTUNE)


def without_autotune() -> Transform:
    """The dataset with tf.data's autotuning model switched off.

    With it on, destroying an iterator (what `fit` and `evaluate` do when
    they return) waits for the autotuning thread, which sleeps in a timed
    wait that grows with the run and is not woken, so each return idles
    (figures in docs/experiment-log.md, "tf.data autotuning is off"). Off, each
    `AUTOTUNE` parallelism is the core count and each `AUTOTUNE` prefetch
    buffer a fixed default; the bundled corpus' pipeline was no slower (same
    section).
    """

    def apply(dataset):
        options = tf.data.Options()
        options.autotune.enabled = False
        return dataset.with_options(options)

    return apply
