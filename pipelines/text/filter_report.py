"""`FilterReport`: how many pairs reach the batches, and why the rest do not.

Reasons of two kinds, counted in one report: token-level ones, decided in the
graph after tokenization (`filter_reason`: an empty side, a side over the
length limit, a length ratio over its limit), and text-level ones, decided
while the files are read (`pipelines.text.parallel_corpus.decode_pairs`: invalid
UTF-8, a TSV line without exactly one tab).
"""

import dataclasses

import tensorflow as tf

# Reason codes, in the order they are tested; code 0 keeps the pair.
FILTER_REASONS = (
    "kept",
    "empty_source",
    "empty_target",
    "source_too_long",
    "target_too_long",
    "length_ratio",
    "invalid_utf8",
    "malformed_line",
)
# How an error names each reason (`on_bad_line="fail"`).
REASON_MESSAGES = {
    "empty_source": "Empty source side",
    "empty_target": "Empty target side",
    "source_too_long": "Source longer than max_train_length",
    "target_too_long": "Target longer than max_train_length",
    "length_ratio": "Length ratio over max_length_ratio",
    "invalid_utf8": "Invalid UTF-8",
    "malformed_line": "Not exactly one tab (a TSV line is source<TAB>target)",
}


def filter_reason(
    source_ids: tf.Tensor,
    target_in_ids: tf.Tensor,
    max_length: int,
    max_length_ratio: float | None = None,
) -> tf.Tensor:
    """Returns the int32 reason code (`FILTER_REASONS`) of one pair (see
    `filter_reasons`)."""
    return filter_reasons(
        tf.shape(source_ids)[0],
        tf.shape(target_in_ids)[0],
        max_length,
        max_length_ratio,
    )


def filter_reasons(
    source_lengths: tf.Tensor,
    target_in_lengths: tf.Tensor,
    max_length: int,
    max_length_ratio: float | None = None,
) -> tf.Tensor:
    """Returns the int32 reason codes (`FILTER_REASONS`) of pairs by lengths.

    Elementwise over `source_lengths` and `target_in_lengths` (int, any equal
    shape). Lengths include the added special ids: the source ends with eos,
    the target input starts with bos (target output: same length, ends with
    eos), so an empty side has length 1. The first reason that applies wins,
    in the order of `FILTER_REASONS`. The length ratio is that of the subword
    counts without the special ids, longer side over shorter (the measure of
    Moses' `clean-corpus-n.perl`, in subwords so that no language's notion of
    a word is assumed); `None` does not test it.
    """
    source_lengths = tf.cast(source_lengths, tf.int32)
    target_in_lengths = tf.cast(target_in_lengths, tf.int32)
    checks = [
        source_lengths <= 1,
        target_in_lengths <= 1,
        source_lengths > max_length,
        target_in_lengths > max_length,
    ]
    if max_length_ratio is not None:
        source_pieces = tf.cast(source_lengths - 1, tf.float32)
        target_pieces = tf.cast(target_in_lengths - 1, tf.float32)
        longer = tf.maximum(source_pieces, target_pieces)
        shorter = tf.maximum(tf.minimum(source_pieces, target_pieces), 1.0)
        checks.append(longer / shorter > max_length_ratio)
    reason = tf.zeros_like(source_lengths)
    for code in range(len(checks), 0, -1):  # the first reason that applies wins
        reason = tf.where(checks[code - 1], code, reason)
    return reason


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
    # Subword-count ratio of the two sides over max_length_ratio.
    length_ratio: int = 0
    # Lines that are not UTF-8 (either side).
    invalid_utf8: int = 0
    # TSV lines without exactly one tab.
    malformed_line: int = 0

    @property
    def filtered(self) -> int:
        """Pairs dropped, all reasons together."""
        return self.total - self.kept

    def __str__(self) -> str:
        """One line; the reasons with a count of 0 are left out."""
        counts = f"kept {self.kept} of {self.total} pairs; filtered {self.filtered}"
        reasons = ", ".join(f"{name}={count}" for name, count in self.skipped.items())
        return f"{counts}: {reasons}" if reasons else counts

    @property
    def skipped(self) -> dict:
        """The reasons with a non-zero count, `{reason: count}`."""
        reasons = FILTER_REASONS[1:]
        return {name: getattr(self, name) for name in reasons if getattr(self, name)}

    @classmethod
    def from_counts(cls, counts) -> "FilterReport":
        """From per-reason counts indexed like `FILTER_REASONS` (a shorter
        sequence leaves the last reasons at 0), or a `{reason: count}` dict."""
        if isinstance(counts, dict):
            unknown = set(counts) - set(FILTER_REASONS)
            if unknown:
                raise ValueError(
                    f"Unknown filter reasons; expected some of {FILTER_REASONS}. "
                    f"Received: {sorted(unknown)}"
                )
            counts = [counts.get(name, 0) for name in FILTER_REASONS]
        counts = [int(c) for c in counts]
        if len(counts) > len(FILTER_REASONS):
            raise ValueError(
                f"Expected at most {len(FILTER_REASONS)} counts. Received: "
                f"counts={counts}"
            )
        counts += [0] * (len(FILTER_REASONS) - len(counts))
        fields = dict(zip(FILTER_REASONS, counts, strict=True))
        return cls(total=sum(counts), **fields)
