"""Parallel text -> the batches `model.fit` consumes, as the paper batched (§5.1).

"Sentence pairs were batched together by approximate sequence length. Each
training batch contained a set of sentence pairs containing approximately 25000
source tokens and 25000 target tokens."

`make_dataset` composes the transformations of `transforms.py`:

1. **Tokenize** in the graph (tensorflow-text), a batch of sentences at a time.
2. **Special ids**: source + eos; target_in = bos + target; target_out =
   target + eos (`special_tokens.py`; pad 0, unk 1, bos 2, eos 3).
3. **Filter**: pairs with an empty side or a side longer than `max_train_length`
   (256) tokens are dropped; `count_filtered` counts them by reason. Optional
   **cache** of the result (memory or file), so tokenization runs once.
4. **Shuffle** (seeded, reshuffled every epoch), before bucketing; with
   `BatchingConfig.endless` the shuffled passes repeat before bucketing, so
   every training batch is full (what `keras-transformer train` uses).
5. **Bucket** by length, each side by its own: the source (with eos) picks
   the first bucket of length S_b >= it, the target (with bos) the first
   T_b >= it, from the same lengths, growing geometrically from 8 by x1.1
   (42 up to 256). Pairs with the same (S_b, T_b) are batched together
   (`tf.data.Dataset.group_by_window`, key = i * 42 + j), so neither side
   spans more than one bucket's length range in a batch. (Bucketing by the
   longer side alone lets the shorter side, here the source, vary within a
   batch: padding efficiency on the bundled corpus was 0.892, 2-D gives
   0.946.)
   **Token budget**: a bucket pair's batch size is `tokens_per_batch //
   max(S_b, T_b)`, rounded down to a multiple of the replica count, so a
   batch holds at most `tokens_per_batch` positions on each side, padding
   included. The budget is *per side* and *global* (all replicas together):
   the default 25,000 is §5.1's 25,000 source + 25,000 target tokens. Real
   tokens per batch are fewer than the budget by the padding, by the shorter
   side of each pair and by the last, partial batch of each bucket pair
   (padding efficiency is measured by
   `benchmarks/pipeline_padding_efficiency.py`). Default batches are padded
   to their longest sequence per side and keep every pair; the static mode
   pads the source to S_b and the target to T_b and fills the last, partial
   batch of each bucket pair with empty rows, so it keeps every pair too and
   yields one shape per occupied bucket pair (a bounded set for XLA and TPUs,
   at most 42 x 42; `batch_shapes` counts a corpus's).
6. **Pack** as `({"source_ids", "target_ids"}, target_out_ids)` (or tuples)
   and **prefetch** (AUTOTUNE), with tf.data's autotuning model off
   (`transforms.without_autotune`): its thread made the iterator's
   destructor, at the end of every `fit` and `evaluate`, wait idle for up
   to tens of seconds, and the pipeline is as fast without it (each
   AUTOTUNE parallelism then takes the core count; BUILD_NOTES.md, "tf.data
   autotuning is off").

Examples:
    >>> pairs = load_bundled()                      # (source, target) strings
    >>> tokenizer = SentencePieceTokenizer.train(sample_texts(pairs), 8000)
    >>> dataset = make_dataset(pairs, tokenizer)    # model.fit(dataset, ...)
"""

import tensorflow as tf

from pipelines.text import transforms
from pipelines.text.batching_config import BatchingConfig
from pipelines.text.filter_report import FILTER_REASONS, FilterReport, filter_reason


def make_dataset(
    pairs: tf.data.Dataset,
    tokenizer,
    config: BatchingConfig | None = None,
    training: bool = True,
    target_tokenizer=None,
) -> tf.data.Dataset:
    """Builds the batched dataset of `(inputs, target_out_ids)`.

    Args:
        pairs: `tf.data.Dataset` of `(source, target)` scalar strings, e.g.
            from `load_bundled`, `load_tfds`, `read_parallel_files`.
        tokenizer: `SentencePieceTokenizer` or `WordPieceTokenizer` (any
            object with `tokenize(strings) -> RaggedTensor`).
        config: `BatchingConfig`. Defaults to `BatchingConfig()` (§5.1).
        training: bool. Shuffle if `True`; evaluation keeps file order within
            buckets. Defaults to `True`.
        target_tokenizer: optional, for separate vocabularies.

    Returns:
        A `tf.data.Dataset` whose elements are `({"source_ids": int32 [B, S],
        "target_ids": int32 [B, T]}, int32 [B, T])` (or tuples), padded with 0.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §5.1.
    """
    config = config or BatchingConfig()
    dataset = _tokenized(pairs, tokenizer, target_tokenizer, config)
    dataset = dataset.apply(
        transforms.filter_by_length(config.max_train_length, config.max_length_ratio)
    )
    if config.cache is True:
        dataset = dataset.cache()
    elif config.cache:
        dataset = dataset.cache(str(config.cache))
    return batch_tokenized(dataset, config, training)


def batch_tokenized(
    dataset: tf.data.Dataset, config: BatchingConfig, training: bool = True
) -> tf.data.Dataset:
    """Steps 4-6 of `make_dataset`: shuffle, bucket, pack and prefetch
    `(source_ids, target_in_ids, target_out_ids)` pairs that are already
    tokenized and filtered (e.g. `pipelines.read_token_cache`). With
    `config.endless` (training only) the shuffled pairs repeat before
    bucketing: an endless stream of full batches.

    Args:
        dataset: `tf.data.Dataset` of `(source_ids, target_in_ids,
            target_out_ids)` int32 vectors.
        config: `BatchingConfig`. The shuffling, bucketing and batching.
        training: bool. Shuffle (and, with `config.endless`, repeat) if
            `True`. Defaults to `True`.

    Returns:
        A `tf.data.Dataset` of batches, as `make_dataset` returns them.
    """
    if training:
        dataset = dataset.apply(
            transforms.shuffle(config.shuffle_buffer_size, config.seed)
        )
        if config.endless:
            dataset = dataset.repeat()  # each pass reshuffled, then bucketed
    dataset = dataset.apply(
        transforms.bucket_by_token_budget(
            config.bucket_lengths, config.bucket_batch_sizes, config.static_shapes
        )
    )
    dataset = dataset.apply(transforms.to_model_inputs(config.element_format))
    return dataset.prefetch(tf.data.AUTOTUNE).apply(transforms.without_autotune())


def count_filtered(
    pairs: tf.data.Dataset,
    tokenizer,
    config: BatchingConfig | None = None,
    target_tokenizer=None,
) -> FilterReport:
    """Counts, in one pass over `pairs`, what `make_dataset` keeps and drops.

    Args:
        pairs: `tf.data.Dataset` of `(source, target)` scalar strings.
        tokenizer: the source tokenizer (and the target's, without
            `target_tokenizer`), as for `make_dataset`.
        config: `BatchingConfig` or `None`. Its filter settings are used.
            Defaults to `BatchingConfig()`.
        target_tokenizer: optional, for separate vocabularies.

    Returns:
        A `FilterReport` (`str()` gives a one-line summary for logs).
    """
    config = config or BatchingConfig()
    dataset = _tokenized(pairs, tokenizer, target_tokenizer, config)
    num_reasons = len(FILTER_REASONS)

    def one_hot(source_ids, target_in_ids, target_out_ids):
        reason = filter_reason(
            source_ids,
            target_in_ids,
            config.max_train_length,
            config.max_length_ratio,
        )
        return tf.one_hot(reason, num_reasons, dtype=tf.int64)

    counts = dataset.map(one_hot, num_parallel_calls=tf.data.AUTOTUNE).reduce(
        tf.zeros([num_reasons], tf.int64), lambda total, x: total + x
    )
    return FilterReport.from_counts(counts.numpy())


def _tokenized(pairs, tokenizer, target_tokenizer, config):
    dataset = pairs.apply(
        transforms.tokenize_pairs(
            tokenizer, target_tokenizer, config.tokenize_batch_size
        )
    )
    return dataset.apply(transforms.add_target_special_ids())
