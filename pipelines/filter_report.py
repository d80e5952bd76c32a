"""`FilterReport`: how many pairs the length filter keeps, and why it drops the rest."""

import dataclasses

import tensorflow as tf

# Reason codes, in the order they are tested; code 0 keeps the pair.
FILTER_REASONS = (
    "kept",
    "empty_source",
    "empty_target",
    "source_too_long",
    "target_too_long",
)


def filter_reason(
    source_ids: tf.Tensor, target_in_ids: tf.Tensor, max_length: int
) -> tf.Tensor:
    """Returns the int32 reason code (`FILTER_REASONS`) of one pair.

    Lengths include the added special ids: the source ends with eos, the
    target input starts with bos (target output: same length, ends with eos),
    so an empty side has length 1.
    """
    source_length = tf.shape(source_ids)[0]
    target_length = tf.shape(target_in_ids)[0]
    return tf.case(
        [
            (source_length <= 1, lambda: tf.constant(1)),
            (target_length <= 1, lambda: tf.constant(2)),
            (source_length > max_length, lambda: tf.constant(3)),
            (target_length > max_length, lambda: tf.constant(4)),
        ],
        default=lambda: tf.constant(0),
    )


@dataclasses.dataclass(frozen=True)
class FilterReport:
    """Counts of pairs kept and filtered, by reason."""

    # Pairs read.
    total: int
    # Pairs that reach the batches (before any static-mode remainder drop).
    kept: int
    # Pairs whose source side is empty.
    empty_source: int
    # Pairs whose target side is empty.
    empty_target: int
    # Source longer than max_length tokens (eos included).
    source_too_long: int
    # Target longer than max_length tokens (bos/eos included).
    target_too_long: int

    @property
    def filtered(self) -> int:
        """Pairs dropped, all reasons together."""
        return self.total - self.kept

    def __str__(self) -> str:
        reasons = ", ".join(
            f"{name}={getattr(self, name)}" for name in FILTER_REASONS[1:]
        )
        counts = f"kept {self.kept} of {self.total} pairs; filtered {self.filtered}"
        return f"{counts}: {reasons}"

    @classmethod
    def from_counts(cls, counts) -> "FilterReport":
        """From per-reason counts indexed like `FILTER_REASONS`."""
        counts = [int(c) for c in counts]
        fields = dict(zip(FILTER_REASONS, counts, strict=True))
        return cls(total=sum(counts), **fields)
