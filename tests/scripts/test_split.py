"""Tests of scripts.corpora.split: hash splits, deduplication, phrases, fixture."""

import collections
import hashlib

import pytest

from scripts.corpora.split import (
    assign_splits,
    bucket,
    dedup_splits,
    pick_fixture,
    select_phrases,
    split_of,
)


def test_bucket_is_a_fixed_hash():
    assert bucket("ding", "Haus {n}") == 729
    assert bucket("t", "Haus {n}") == 881  # the salt matters
    digest = hashlib.sha256(b"t\0delta").hexdigest()
    assert bucket("t", "delta") == int(digest[:8], 16) % 1000 == 242


@pytest.mark.parametrize(
    "b, expected",
    [
        (0, "test"),
        (39, "test"),
        (40, "dev"),
        (79, "dev"),
        (80, "train"),
        (999, "train"),
    ],
)
def test_split_of(b, expected):
    assert split_of(b, 40, 40) == expected


def test_split_of_without_held_out_buckets():
    assert split_of(0, 0, 0) == "train"


# Buckets for salt "t": delta 242, iota 116 (test); gamma 414, epsilon 352
# (dev); alpha 638, beta 621 (train), with 300 test and 300 dev buckets.
ITEMS = [
    ("alpha", "a1", "A1"),
    ("delta", "d1", "D1"),
    ("gamma", "g1", "G1"),
    ("alpha", "a2", "A2"),
    ("iota", "i1", "I1"),
    ("beta", "b1", "B1"),
    ("epsilon", "e1", "E1"),
    ("delta", "d2", "D2"),
]


def test_assign_splits():
    splits = assign_splits(ITEMS, "t", 300, 300)
    assert splits == {
        "train": [("a1", "A1"), ("a2", "A2"), ("b1", "B1")],
        "dev": [("g1", "G1"), ("e1", "E1")],
        "test": [("d1", "D1"), ("i1", "I1"), ("d2", "D2")],
    }
    assert list(splits) == ["train", "dev", "test"]


def test_assign_splits_is_deterministic_disjoint_and_complete():
    items = [(f"key{i % 37}", f"en{i}", f"fo{i}") for i in range(500)]
    a = assign_splits(items, "x", 100, 150)
    assert a == assign_splits(list(items), "x", 100, 150)
    assert sum(len(v) for v in a.values()) == 500
    got = [p for v in a.values() for p in v]
    assert sorted(got) == sorted((s, t) for _, s, t in items)
    keys_of = {
        name: {f"key{int(s[2:]) % 37}" for s, _ in pairs} for name, pairs in a.items()
    }
    assert not keys_of["train"] & keys_of["dev"]
    assert not keys_of["train"] & keys_of["test"]
    assert not keys_of["dev"] & keys_of["test"]


def test_assign_splits_sizes_follow_the_buckets():
    items = [(f"k{i}", "s", "t") for i in range(4000)]
    sizes = {k: len(v) for k, v in assign_splits(items, "x", 100, 200).items()}
    # about 10% / 20% / 70%
    assert 340 <= sizes["test"] <= 460
    assert 720 <= sizes["dev"] <= 880
    assert sum(sizes.values()) == 4000
    assert assign_splits(items[:10], "x", 1000, 0)["test"] == [("s", "t")] * 10


def test_dedup_splits():
    splits = {
        "en-de": {
            "test": [("Hello world.", "Hallo Welt.")],
            "dev": [
                ("hello, world", "Anders."),  # English side is in test
                ("Good day.", "Guten Tag."),
                ("good day", "Guten tag!"),  # same keys as the previous pair
            ],
            "train": [
                ("Other.", "hallo welt"),  # German side is in test
                ("Good day!", "Tag."),  # English side is in dev
                ("New one.", "Neu."),
                ("New one.", "Neu."),
            ],
        }
    }
    stats = collections.Counter()
    out = dedup_splits(splits, stats, "x", pool_english=False)
    assert out == {
        "en-de": {
            "test": [("Hello world.", "Hallo Welt.")],
            "dev": [("Good day.", "Guten Tag.")],
            "train": [("New one.", "Neu.")],
        }
    }
    assert stats == {
        "x en-de: dev dropped, in a held-out split": 1,
        "x en-de: dev dropped, duplicate pair": 1,
        "x en-de: train dropped, in a held-out split": 2,
        "x en-de: train dropped, duplicate pair": 1,
    }


def _two_pairs():
    return {
        "en-de": {
            "test": [],
            "dev": [],
            "train": [("Shared text.", "Geteilter Text."), ("Hallo.", "Hallo!")],
        },
        "en-fr": {
            "test": [("Shared text.", "Texte partagé."), ("Hi.", "Hallo.")],
            "dev": [],
            "train": [],
        },
    }


def test_dedup_splits_pools_english_only_when_asked():
    stats = collections.Counter()
    pooled = dedup_splits(_two_pairs(), stats, "lo", pool_english=True)
    # The English is in en-fr test; "Hallo!" is German, not French: kept.
    assert pooled["en-de"]["train"] == [("Hallo.", "Hallo!")]
    assert stats == {"lo en-de: train dropped, in a held-out split": 1}
    separate = dedup_splits(_two_pairs(), collections.Counter(), "lo", False)
    assert separate["en-de"]["train"] == _two_pairs()["en-de"]["train"]


# Buckets for salt "ding" with 55 test and 55 dev buckets: lambda 37 and mu 22
# are test, alpha 276 and delta 702 are train.
def test_select_phrases():
    phrases = [
        ("alpha", "an old house", "ein altes Haus"),
        ("lambda", "a new house", "ein neues Haus"),  # entry in test
        ("alpha", "good morning", "guten Tag"),  # English is held out
        ("delta", "see you", "Guten Morgen"),  # German is held out
        ("delta", "old houses", "alte Häuser"),
        ("alpha", "an old house", "ein altes Haus"),  # repeat
        ("mu", "x y", "z w"),  # entry in test
    ]
    held_out = {
        "train": [("an old house", "ein altes Haus")],  # train is not held out
        "dev": [("Good morning!", "Guten Tag!")],
        "test": [("Morning.", "guten morgen")],
    }
    stats = collections.Counter()
    kept = select_phrases(phrases, held_out, stats, "ding", 55, 55)
    assert kept == [("an old house", "ein altes Haus"), ("old houses", "alte Häuser")]
    assert stats == {
        "ding phrase: dropped, entry in dev/test": 2,
        "ding phrase: dropped, overlaps dev/test": 2,
        "ding phrase: dropped, duplicate": 1,
    }


def _sha(pair):
    return hashlib.sha256(f"{pair[0]}\t{pair[1]}".encode()).digest()


def test_pick_fixture_filters_by_length_and_orders_by_hash():
    train = [
        ("Two words", "Zwei Wörter"),  # English too short
        ("Three short words", "Drei kurze Wörter"),
        (" ".join(["w"] * 31), "kurz"),  # English too long
        ("Open the file.", " ".join(["w"] * 31)),  # foreign too long
        ("Close the file.", "Datei"),  # one foreign word is fine
        (" ".join(["w"] * 30), " ".join(["v"] * 30)),
    ]
    picked = pick_fixture(train)
    assert sorted(picked) == sorted([train[1], train[4], train[5]])
    assert picked == sorted(picked, key=_sha)
    assert pick_fixture(train) == picked


def test_pick_fixture_takes_at_most_300():
    train = [(f"pair number {i}", f"Paar Nummer {i}") for i in range(305)]
    picked = pick_fixture(train)
    assert len(picked) == 300
    assert picked == sorted(train, key=_sha)[:300]
