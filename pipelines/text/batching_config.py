"""`BatchingConfig`: how pairs become batches, with the paper's defaults."""

import dataclasses

from pipelines.text.bucketing import geometric_bucket_lengths, token_budget_batch_sizes

ELEMENT_FORMATS = ("dict", "tuple")


@dataclasses.dataclass(frozen=True)
class BatchingConfig:
    """Filtering, shuffling, bucketing and batching options (§5.1).

    Derive variants with `dataclasses.replace(config, ...)`.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §5.1.
    """

    # Token budget per side (source and target each) per global batch, all
    # replicas together: "approximately 25000 source tokens and 25000 target
    # tokens" (§5.1). Counted in padded positions, so real tokens are fewer.
    tokens_per_batch: int = 25_000
    # Longest source (with eos) or target (with bos or eos) kept, in tokens;
    # longer pairs are filtered and counted. tensor2tensor's default.
    max_train_length: int = 256
    # Longest subword-count ratio of a pair's two sides (longer over shorter);
    # pairs over it are filtered and counted. `None` (the paper's setting)
    # does not filter on the ratio.
    max_length_ratio: float | None = None
    # Length of the first bucket; geometric growth from there. Source and target
    # are bucketed separately on these lengths (a batch per bucket pair).
    min_bucket_length: int = 8
    # Ratio of consecutive bucket lengths (tensor2tensor's 1.1).
    bucket_scale: float = 1.1
    # Batch sizes are multiples of this (tf.distribute replicas in sync).
    num_replicas: int = 1
    # Pad each side to its bucket length and fill partial batches with empty
    # rows: one shape per bucket pair, a bounded set for XLA and TPUs, every
    # pair kept. Default: pad each side to its longest in the batch.
    static_shapes: bool = False
    # Training only: repeat the shuffled pairs before bucketing, so that a
    # bucket pair's batch fills across passes over the data. Every batch is
    # then full (no partial batch per bucket pair and pass, which on a small
    # corpus with fine buckets made many updates tiny) and the stream never
    # ends: for `model.fit` with `steps_per_epoch`, as `fit_resumable` runs
    # it. Each pass is reshuffled; the stream is the same every time it is
    # built (the seed), so a resumed run skips to the same batch.
    endless: bool = False
    # Shuffle buffer, in pairs (before bucketing).
    shuffle_buffer_size: int = 100_000
    # Shuffle seed; the order also changes every epoch (reshuffle_each_iteration).
    seed: int | None = 0
    # "dict": ({"source_ids", "target_ids"}, target_out_ids), what the model
    # takes; "tuple": ((source_ids, target_in_ids), target_out_ids).
    element_format: str = "dict"
    # Sentences tokenized per call of the in-graph tokenizer.
    tokenize_batch_size: int = 1024
    # Cache the tokenized, filtered pairs: False, True (memory) or a file
    # prefix (`tf.data.Dataset.cache(filename)`), so that a WMT-size corpus is
    # tokenized once, not every epoch.
    cache: bool | str = False

    def __post_init__(self):
        if self.element_format not in ELEMENT_FORMATS:
            raise ValueError(
                f"element_format must be one of {ELEMENT_FORMATS}. Received: "
                f"element_format={self.element_format!r}"
            )
        for name in ("shuffle_buffer_size", "tokenize_batch_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"{name} must be a positive integer. Received: {name}={value}"
                )
        ratio = self.max_length_ratio
        if ratio is not None and not (isinstance(ratio, int | float) and ratio >= 1):
            raise ValueError(
                "max_length_ratio must be a number >= 1 or None. Received: "
                f"max_length_ratio={ratio!r}"
            )
        # Validates the remaining fields with their own error messages.
        token_budget_batch_sizes(
            self.bucket_lengths, self.tokens_per_batch, self.num_replicas
        )

    @property
    def bucket_lengths(self) -> list[int]:
        """Bucket lengths (padded lengths in static mode)."""
        return geometric_bucket_lengths(
            self.max_train_length, self.min_bucket_length, self.bucket_scale
        )

    @property
    def bucket_batch_sizes(self) -> list[int]:
        """Global batch size of each bucket length; a bucket pair (i, j) takes
        that of bucket `max(i, j)`, its longer padded side."""
        return token_budget_batch_sizes(
            self.bucket_lengths, self.tokens_per_batch, self.num_replicas
        )
