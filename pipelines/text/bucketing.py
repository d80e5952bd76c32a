"""Length buckets and their token-budget batch sizes (pure Python).

Bucket lengths grow geometrically, as in tensor2tensor: start at
`min_length`, multiply by `scale` (at least +1 each step), end at `max_length`.
With the defaults (8, x1.1, 256) that is 8, 9, ..., 20, 22, 24, 26, 28, 30, 33,
36, ..., 236, 256: 42 buckets. Each side of a pair is bucketed on its own: a
side (with bos/eos) of n tokens goes to the first bucket of length >= n, and
the pair to the bucket pair (source bucket, target bucket).

A bucket of length L gets batch size `tokens_per_batch // L`, rounded down to a
multiple of `num_replicas`; a bucket pair (S_b, T_b) gets that of max(S_b,
T_b), so a batch padded to S_b and T_b holds at most `tokens_per_batch` tokens
on each side.
"""


def geometric_bucket_lengths(
    max_length: int = 256, min_length: int = 8, scale: float = 1.1
) -> list[int]:
    """Returns increasing bucket lengths, the last one `max_length`.

    Args:
        max_length: int. Longest sequence kept, in tokens. Defaults to `256`.
        min_length: int. Length of the first bucket. Defaults to `8`.
        scale: float > 1. Ratio of consecutive lengths. Defaults to `1.1`.

    Returns:
        list of int, from `min_length` up to `max_length`.
    """
    if not isinstance(min_length, int) or min_length < 1:
        raise ValueError(
            f"min_length must be a positive integer. Received: min_length={min_length}"
        )
    if not isinstance(max_length, int) or max_length < min_length:
        raise ValueError(
            "max_length must be an integer >= min_length. Received: "
            f"max_length={max_length}, min_length={min_length}"
        )
    if not scale > 1.0:
        raise ValueError(f"scale must be greater than 1. Received: scale={scale}")
    lengths = []
    length = min_length
    while length < max_length:
        lengths.append(length)
        length = max(length + 1, int(length * scale))
    lengths.append(max_length)
    return lengths


def token_budget_batch_sizes(
    bucket_lengths: list[int], tokens_per_batch: int = 25_000, num_replicas: int = 1
) -> list[int]:
    """Returns the global batch size of each bucket.

    Args:
        bucket_lengths: list of int. As from `geometric_bucket_lengths`.
        tokens_per_batch: int. Token budget per side (source, target) over all
            replicas. Defaults to `25000` (§5.1).
        num_replicas: int. Batch sizes are multiples of it, so every replica
            gets an equal share. Defaults to `1`.

    Returns:
        list of int, one batch size per bucket.

    Raises:
        ValueError: the budget cannot fit `num_replicas` sequences of the
            longest bucket.
    """
    if not isinstance(num_replicas, int) or num_replicas < 1:
        raise ValueError(
            "num_replicas must be a positive integer. Received: "
            f"num_replicas={num_replicas}"
        )
    if not isinstance(tokens_per_batch, int) or tokens_per_batch < 1:
        raise ValueError(
            "tokens_per_batch must be a positive integer. Received: "
            f"tokens_per_batch={tokens_per_batch}"
        )
    sizes = [
        tokens_per_batch // length // num_replicas * num_replicas
        for length in bucket_lengths
    ]
    if min(sizes) < num_replicas:
        longest = max(bucket_lengths)
        raise ValueError(
            f"tokens_per_batch must be at least the longest bucket ({longest}) "
            f"times num_replicas ({num_replicas}). Received: "
            f"tokens_per_batch={tokens_per_batch}"
        )
    return sizes


def pair_batch_sizes(batch_sizes: list[int]) -> list[int]:
    """The batch size of every bucket pair, at key `i * N + j` (source bucket
    `i`, target bucket `j`, `N` buckets): that of bucket `max(i, j)`, the
    longer padded side, so neither side exceeds the token budget."""
    buckets = range(len(batch_sizes))
    return [batch_sizes[max(i, j)] for i in buckets for j in buckets]
