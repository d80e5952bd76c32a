"""Deterministic train/dev/test splitting, cross-split deduplication, samples.

What belongs here: assigning items to splits by a hash of a grouping key
(``bucket``, ``split_of``, ``assign_splits``), removing duplicates within and
overlaps across splits (``dedup_splits``, ``select_phrases``) and picking the
small test fixture (``pick_fixture``).  No randomness: the same input always
gives the same splits.
"""

from __future__ import annotations

import collections
import hashlib

from .config import FIXTURE_MAX_WORDS, FIXTURE_SIZE, SPLITS
from .text import dedup_key, word_count


def bucket(salt: str, key: str) -> int:
    """Return the bucket of `key`, in ``[0, 1000)``.

    The bucket is the first 32 bits of ``sha256(salt + "\\0" + key)`` (UTF-8)
    modulo 1000: stable across runs, machines and Python versions.

    Args:
        salt: the corpus name, so that corpora are split independently.
        key: the grouping key (a help page path, a dictionary headword).
    """
    digest = hashlib.sha256((salt + "\0" + key).encode("utf-8")).hexdigest()
    return int(digest[:8], 16) % 1000


def split_of(b: int, n_test: int, n_dev: int) -> str:
    """Return the split of bucket `b`.

    Args:
        b: a bucket, from `bucket`.
        n_test: buckets ``[0, n_test)`` are ``"test"``.
        n_dev: buckets ``[n_test, n_test + n_dev)`` are ``"dev"``; the rest
            are ``"train"``.
    """
    if b < n_test:
        return "test"
    if b < n_test + n_dev:
        return "dev"
    return "train"


def assign_splits(
    items: list[tuple[str, str, str]], salt: str, n_test: int, n_dev: int
) -> dict[str, list[tuple[str, str]]]:
    """Split ``(key, english, foreign)`` items by the bucket of their key.

    Items with the same key always go to the same split; order is kept.

    Args:
        items: the ``(key, english, foreign)`` items.
        salt: passed to `bucket`.
        n_test: passed to `split_of`.
        n_dev: passed to `split_of`.

    Returns:
        ``{"train": pairs, "dev": pairs, "test": pairs}`` of ``(english,
        foreign)`` pairs.
    """
    out: dict[str, list[tuple[str, str]]] = {s: [] for s in SPLITS}
    for key, s, t in items:
        out[split_of(bucket(salt, key), n_test, n_dev)].append((s, t))
    return out


def dedup_splits(
    splits_by_pair: dict[str, dict[str, list[tuple[str, str]]]],
    stats: collections.Counter,
    label: str,
    pool_english: bool,
) -> dict[str, dict[str, list[tuple[str, str]]]]:
    """Remove within-split duplicate pairs and cross-split overlaps.

    ``splits_by_pair`` maps a language pair name to its {split: pairs}.  A pair
    is kept in ``dev`` only if neither side occurs in ``test``, and in ``train``
    only if neither side occurs in ``dev`` or ``test`` (case- and
    punctuation-insensitively, see `text.dedup_key`).  A pair whose keys equal
    those of an earlier pair of the same split is dropped too.  With
    ``pool_english`` the English sides of all language pairs are pooled for
    this check.

    Args:
        splits_by_pair: ``{name: {split: [(english, foreign), ...]}}``, with
            the three splits of `config.SPLITS` for each name.
        stats: counts of the dropped pairs, updated in place.
        label: the corpus name used in the `stats` keys (``"lo"``, ``"ding"``).
        pool_english: check the English side against the held-out English of
            every language pair, not only its own.

    Returns:
        The kept pairs, ``{name: {split: pairs}}``, order kept.
    """
    held: dict[str, set[str]] = collections.defaultdict(set)  # name -> keys
    result: dict[str, dict[str, list[tuple[str, str]]]] = {
        name: {} for name in splits_by_pair
    }
    for split in ("test", "dev", "train"):
        for name, splits in splits_by_pair.items():
            seen_pairs = set()
            kept = []
            for s, t in splits[split]:
                ks, kt = "en:" + dedup_key(s), name + ":" + dedup_key(t)
                en_held = held["*" if pool_english else name]
                if split != "test" and (ks in en_held or kt in held[name]):
                    stats[f"{label} {name}: {split} dropped, in a held-out split"] += 1
                    continue
                if (ks, kt) in seen_pairs:
                    stats[f"{label} {name}: {split} dropped, duplicate pair"] += 1
                    continue
                seen_pairs.add((ks, kt))
                kept.append((s, t))
            result[name][split] = kept
        if split != "train":
            for name in splits_by_pair:
                for s, t in result[name][split]:
                    held["*" if pool_english else name].add("en:" + dedup_key(s))
                    held[name].add(name + ":" + dedup_key(t))
    return result


def select_phrases(
    phrases: list[tuple[str, str, str]],
    held_out: dict[str, list[tuple[str, str]]],
    stats: collections.Counter,
    salt: str,
    n_test: int,
    n_dev: int,
) -> list[tuple[str, str]]:
    """Keep the phrase pairs that may join the train split.

    A phrase is kept when its key falls in the train split (`split_of` of
    its `bucket`), neither side occurs (by `text.dedup_key`) in the ``dev``
    or ``test`` pairs of `held_out`, and it is not an exact repeat of an
    earlier kept phrase.

    Args:
        phrases: ``(key, english, foreign)`` phrase pairs.
        held_out: the deduplicated splits of the same corpus; only its
            ``"dev"`` and ``"test"`` pairs are used.
        stats: counts of the dropped phrases, updated in place.
        salt: passed to `bucket`.
        n_test: passed to `split_of`.
        n_dev: passed to `split_of`.

    Returns:
        The kept ``(english, foreign)`` pairs, in order.
    """
    held_en = {dedup_key(s) for sp in ("dev", "test") for s, _ in held_out[sp]}
    held_fo = {dedup_key(t) for sp in ("dev", "test") for _, t in held_out[sp]}
    kept, seen = [], set()
    for key, s, t in phrases:
        if split_of(bucket(salt, key), n_test, n_dev) != "train":
            stats["ding phrase: dropped, entry in dev/test"] += 1
            continue
        if dedup_key(s) in held_en or dedup_key(t) in held_fo:
            stats["ding phrase: dropped, overlaps dev/test"] += 1
            continue
        if (s, t) in seen:
            stats["ding phrase: dropped, duplicate"] += 1
            continue
        seen.add((s, t))
        kept.append((s, t))
    return kept


def pick_fixture(train: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Pick the test fixture: `config.FIXTURE_SIZE` short pairs of `train`.

    Candidates have 3 to `config.FIXTURE_MAX_WORDS` English words and at
    most `config.FIXTURE_MAX_WORDS` foreign words; they are ordered by the
    SHA-256 of ``english<TAB>foreign`` and the first ones are taken.

    Args:
        train: the ``(english, foreign)`` pairs to pick from.

    Returns:
        At most `config.FIXTURE_SIZE` pairs.
    """
    candidates = [
        p
        for p in train
        if 3 <= word_count(p[0]) <= FIXTURE_MAX_WORDS
        and word_count(p[1]) <= FIXTURE_MAX_WORDS
    ]
    candidates.sort(key=lambda p: hashlib.sha256(f"{p[0]}\t{p[1]}".encode()).digest())
    return candidates[:FIXTURE_SIZE]
