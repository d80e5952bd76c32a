"""Small `Dataset -> Dataset` transformations, composed by `pipeline.py`.

Each function returns a callable for `tf.data.Dataset.apply`. Elements flow as:

    (source, target)                          scalar tf.string
    -> (source_ids, target_ids)               int32 [S'], [T']   tokenize_pairs
    -> (source_ids, target_in, target_out)    int32 [S], [T], [T] add_special_ids
    -> same, filtered                                             filter_by_length
    -> same, batched and padded with 0        [B, S], [B, T], [B, T]
                                                                  bucket_by_token_budget
    -> ({"source_ids", "target_ids"}, target_out) or ((.., ..), ..) to_model_inputs
"""

from collections.abc import Callable

import tensorflow as tf

from pipelines.filter_report import filter_reason
from pipelines.special_tokens import BOS_ID, EOS_ID, PAD_ID

Transform = Callable[[tf.data.Dataset], tf.data.Dataset]
AUTOTUNE = tf.data.AUTOTUNE


def tokenize_pairs(
    tokenizer, target_tokenizer=None, batch_size: int = 1024
) -> Transform:
    """Tokenizes `(source, target)` strings in the graph, `batch_size` at a time.

    Args:
        tokenizer: a tokenizer with `tokenize(strings) -> RaggedTensor`.
        target_tokenizer: optional separate target tokenizer; defaults to the
            shared `tokenizer` (§5.1's shared vocabulary).
        batch_size: int. Sentences per tokenizer call (vectorised, far faster
            than one call per sentence). Defaults to `1024`.
    """
    target_tokenizer = target_tokenizer or tokenizer

    def tokenize(sources, targets):
        return tokenizer.tokenize(sources), target_tokenizer.tokenize(targets)

    def apply(dataset):
        dataset = dataset.batch(batch_size)
        dataset = dataset.map(tokenize, num_parallel_calls=AUTOTUNE)
        return dataset.unbatch()  # ragged [n, (N)] -> [N] per pair, order kept

    return apply


def add_special_ids() -> Transform:
    """Appends eos to the source; makes target_in = bos + target, target_out =
    target + eos (teacher forcing: the decoder reads target_in, predicts
    target_out). The eos on the source follows tensor2tensor."""
    bos = tf.constant([BOS_ID], tf.int32)
    eos = tf.constant([EOS_ID], tf.int32)

    def add(source_ids, target_ids):
        return (
            tf.concat([source_ids, eos], 0),  # [S]
            tf.concat([bos, target_ids], 0),  # [T]
            tf.concat([target_ids, eos], 0),  # [T]
        )

    return lambda dataset: dataset.map(add, num_parallel_calls=AUTOTUNE)


def filter_by_length(max_length: int) -> Transform:
    """Drops pairs with an empty side or a side over `max_length` tokens.

    Use `pipelines.count_filtered` to count the dropped pairs by reason.
    """

    def keep(source_ids, target_in_ids, target_out_ids):
        return filter_reason(source_ids, target_in_ids, max_length) == 0

    return lambda dataset: dataset.filter(keep)


def shuffle(buffer_size: int, seed: int | None) -> Transform:
    """Seeded shuffle, a new order every epoch."""
    return lambda dataset: dataset.shuffle(
        buffer_size, seed=seed, reshuffle_each_iteration=True
    )


def bucket_by_token_budget(
    bucket_lengths: list[int], batch_sizes: list[int], static_shapes: bool = False
) -> Transform:
    """Groups pairs by length and batches each bucket to its token budget.

    A pair goes to the first bucket whose length is >= max(len(source_ids),
    len(target_in_ids)). With `static_shapes` every batch is padded to its
    bucket's length and partial batches are dropped; otherwise batches are
    padded to their longest sequence (per side) and the last, partial batch of
    each bucket is kept, so an epoch yields every pair once.

    Args:
        bucket_lengths: list of int. Increasing; the last is the filter's
            `max_length` (longer pairs must be filtered out before).
        batch_sizes: list of int. Batch size of each bucket.
        static_shapes: bool. Defaults to `False`.
    """

    def length(source_ids, target_in_ids, target_out_ids):
        return tf.maximum(tf.shape(source_ids)[0], tf.shape(target_in_ids)[0])

    def apply(dataset):
        return dataset.bucket_by_sequence_length(
            element_length_func=length,
            # tf.data buckets are [b_{i-1}, b_i) and static padding goes to
            # b_i - 1: boundaries one above our inclusive lengths.
            bucket_boundaries=[n + 1 for n in bucket_lengths],
            # The bucket past the last boundary stays empty after filtering.
            bucket_batch_sizes=list(batch_sizes) + [batch_sizes[-1]],
            padding_values=(tf.constant(PAD_ID, tf.int32),) * 3,
            pad_to_bucket_boundary=static_shapes,
            drop_remainder=static_shapes,
        )

    return apply


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
