"""Texts for vocabulary training, drawn from a dataset of string pairs.

The shared source+target vocabulary of §5.1 is learned from both sides of the
training pairs. For WMT-size corpora a seeded uniform sample (reservoir
sampling, one pass) bounds the memory and time of the vocabulary trainer.
"""

import random
from collections.abc import Iterable, Iterator

import tensorflow as tf


def sample_texts(
    pairs: tf.data.Dataset | Iterable[tuple[str, str]],
    max_pairs: int | None = None,
    seed: int = 0,
) -> list[str]:
    """Returns the source and target texts of (a sample of) `pairs`.

    One pass over `pairs`; memory holds the sample only.

    Args:
        pairs: `tf.data.Dataset` of `(source, target)` string pairs, or an
            iterable of `(source, target)` str pairs (e.g. a stream of
            `pipelines.decode_pairs`).
        max_pairs: int or `None`. Sample this many pairs uniformly (seeded
            reservoir sampling); `None` keeps all. Defaults to `None`.
        seed: int. Sampling seed. Defaults to `0`.

    Returns:
        A list of strings: source, target, source, target, ... (empty sides
        skipped).
    """
    if max_pairs is not None and max_pairs < 1:
        raise ValueError(
            f"max_pairs must be a positive integer or None. Received: "
            f"max_pairs={max_pairs}"
        )
    rng = random.Random(seed)
    reservoir = []
    if isinstance(pairs, tf.data.Dataset):
        pairs = _decoded(pairs)
    for index, pair in enumerate(pairs):
        if max_pairs is None or len(reservoir) < max_pairs:
            reservoir.append(pair)
        else:
            slot = rng.randint(0, index)
            if slot < max_pairs:
                reservoir[slot] = pair
    return [text for pair in reservoir for text in pair if text]


def _decoded(pairs: tf.data.Dataset) -> Iterator[tuple[str, str]]:
    for source, target in pairs.as_numpy_iterator():
        yield source.decode("utf-8"), target.decode("utf-8")
