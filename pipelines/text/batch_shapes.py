"""The padded batch shapes of a corpus in static mode, counted before training.

XLA compiles a train step once per input shape, so a run in static mode
(`BatchingConfig.static_shapes`) compiles once per bucket pair its corpus
occupies. `batch_shapes` counts them in one pass over the tokenized pairs
(lengths only, no batching), so `train` can say how many compilations to
expect before the first one starts.
"""

import dataclasses

import tensorflow as tf

from pipelines.text.batching_config import BatchingConfig
from pipelines.text.bucketing import pair_batch_sizes
from pipelines.text.transforms import bucket_pair_key


@dataclasses.dataclass(frozen=True, order=True)
class BatchShape:
    """One padded batch shape: `batch` rows, `source_length` and
    `target_length` positions (the bucket lengths of its bucket pair)."""

    batch: int
    source_length: int
    target_length: int

    def __str__(self):
        return f"{self.batch} x {self.source_length}+{self.target_length}"


def batch_shapes(tokenized: tf.data.Dataset, config: BatchingConfig) -> dict:
    """The shapes `batch_tokenized(tokenized, config)` yields in static mode.

    Args:
        tokenized: `tf.data.Dataset` of `(source_ids, target_in_ids,
            target_out_ids)`, already filtered to `config.max_train_length`
            (e.g. a run's token cache).
        config: `BatchingConfig`; its bucket lengths and batch sizes are
            used whatever its `static_shapes`.

    Returns:
        `{BatchShape: number of batches per epoch}`, sorted by shape, one
        entry per occupied bucket pair (a partial batch counts as one: static
        mode fills it with empty rows).
    """
    lengths = config.bucket_lengths
    sizes = pair_batch_sizes(config.bucket_batch_sizes)
    num_buckets = len(lengths)
    keys = tokenized.map(
        bucket_pair_key(lengths), num_parallel_calls=tf.data.AUTOTUNE
    ).batch(65_536)
    counts = keys.reduce(
        tf.zeros([num_buckets * num_buckets], tf.int64),
        lambda total, batch: (
            total
            + tf.math.bincount(
                batch,
                minlength=num_buckets**2,
                maxlength=num_buckets**2,
                dtype=tf.int64,
            )
        ),
    ).numpy()
    shapes = {}
    for key in sorted(int(k) for k in counts.nonzero()[0]):
        i, j = divmod(key, num_buckets)
        batch = sizes[key]
        shape = BatchShape(batch, lengths[i], lengths[j])
        shapes[shape] = -(-int(counts[key]) // batch)
    return dict(sorted(shapes.items()))
