"""The issue's "what must be shown", on the bundled corpus and mock TFDS data:
exact batch shapes, the token budget, every kept pair exactly once, and the
filter report."""

import collections
import dataclasses

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

from pipelines import (
    BOS_ID,
    BatchingConfig,
    SentencePieceTokenizer,
    batch_shapes,
    count_filtered,
    load_bundled,
    load_tfds,
    make_dataset,
    sample_texts,
)

from .conftest import epoch_pairs_and_shapes, expected_kept

SMALL = BatchingConfig(
    tokens_per_batch=1200, max_train_length=48, shuffle_buffer_size=500
)


def _bucket_of(length, config):
    return next(b for b in config.bucket_lengths if b >= length)


def _batch_size_of(source_bucket, target_bucket, config):
    """Batch size of a bucket pair: that of its longer bucket length."""
    sizes = dict(zip(config.bucket_lengths, config.bucket_batch_sizes, strict=True))
    return sizes[max(source_bucket, target_bucket)]


def _check_dynamic_epoch(dataset, expected, config):
    """Every kept pair exactly once; budget; at most one partial batch per
    bucket pair (a batch padded to its longest source and target lies in the
    bucket pair of those two lengths)."""
    pairs, shapes = epoch_pairs_and_shapes(dataset)
    assert pairs == expected  # multiset equality (both sorted)
    partial = collections.Counter()
    for batch, source_length, target_length in shapes:
        buckets = (_bucket_of(source_length, config), _bucket_of(target_length, config))
        size = _batch_size_of(*buckets, config)
        assert batch <= size and size % config.num_replicas == 0
        assert batch * source_length <= config.tokens_per_batch
        assert batch * target_length <= config.tokens_per_batch
        partial[buckets] += batch < size
    assert max(partial.values(), default=0) <= 1
    return shapes


def _rows_match_bucket(dataset, config):
    """Each row's source and target lengths fall in the batch's bucket pair;
    each side is padded to its longest row in the batch."""
    lengths = config.bucket_lengths
    previous = dict(zip(lengths, [0] + lengths[:-1], strict=True))
    for inputs, target_out in dataset.as_numpy_iterator():
        for ids in (inputs["source_ids"], target_out):
            row_lengths = (ids != 0).sum(1)
            assert ids.shape[1] == row_lengths.max()  # padded to the batch max
            bucket = _bucket_of(ids.shape[1], config)
            assert np.all(row_lengths > previous[bucket])
            assert np.all(row_lengths <= bucket)


def test_bundled_fixture_epoch(fixture_pairs, sp_tokenizer):
    dataset = make_dataset(fixture_pairs, sp_tokenizer, SMALL)
    # Autotuning off: its thread kept `fit` and `evaluate` waiting, idle, in
    # the iterator's destructor (benchmarks/fit_end_wait.py).
    assert dataset.options().autotune.enabled is False
    expected = expected_kept(fixture_pairs, sp_tokenizer, SMALL.max_train_length)
    _check_dynamic_epoch(dataset, expected, SMALL)
    _rows_match_bucket(dataset, SMALL)
    report = count_filtered(fixture_pairs, sp_tokenizer, SMALL)
    assert report.total == 300 and report.kept == len(expected)
    assert report.filtered == report.source_too_long + report.target_too_long > 0
    assert report.empty_source == report.empty_target == 0


def test_bundled_corpus_epoch_and_static_shapes(sp_tokenizer):
    # 1,835 real pairs (LibreOffice help en-de dev) through the default path.
    pairs = load_bundled(split="dev")
    config = dataclasses.replace(SMALL, max_train_length=64, tokens_per_batch=2000)
    expected = expected_kept(pairs, sp_tokenizer, config.max_train_length)
    _check_dynamic_epoch(make_dataset(pairs, sp_tokenizer, config), expected, config)

    # A smaller budget, so that many bucket pairs fill whole batches.
    static = dataclasses.replace(config, static_shapes=True, tokens_per_batch=640)
    per_pair = collections.Counter(
        (_bucket_of(len(s), static), _bucket_of(len(t), static)) for s, t in expected
    )
    want = collections.Counter()
    for (source_bucket, target_bucket), count in per_pair.items():
        size = _batch_size_of(source_bucket, target_bucket, static)
        want[(size, source_bucket, target_bucket)] = -(-count // size)
    got_pairs, shapes = epoch_pairs_and_shapes(
        make_dataset(pairs, sp_tokenizer, static), empty_rows=True
    )
    assert len(shapes) > 10 and collections.Counter(shapes) == want  # exact
    assert any(s != t for _, s, t in shapes)  # each side padded to its own bucket
    assert got_pairs == sorted(expected)  # every pair, once: none dropped
    # `batch_shapes` counts the same shapes from the lengths alone.
    tokenized = tf.data.Dataset.from_generator(
        lambda: ((s, (BOS_ID,) + t[:-1], t) for s, t in expected),
        output_signature=(tf.TensorSpec([None], tf.int32),) * 3,
    )
    counted = batch_shapes(tokenized, static)
    assert list(counted) == sorted(counted)
    assert {
        (b.batch, b.source_length, b.target_length): n for b, n in counted.items()
    } == want


def test_mock_tfds_epoch():
    config = dataclasses.replace(SMALL, max_train_length=16, tokens_per_batch=160)
    with tfds.testing.mock_data(num_examples=120):
        pairs = load_tfds("wmt14_translate/de-en", split="train")
        tokenizer = SentencePieceTokenizer.train(sample_texts(pairs), vocab_size=300)
        expected = expected_kept(pairs, tokenizer, config.max_train_length)
        report = count_filtered(pairs, tokenizer, config)
        dataset = make_dataset(pairs, tokenizer, config)
        _check_dynamic_epoch(dataset, expected, config)
        static = dataclasses.replace(
            config, static_shapes=True, num_replicas=2, tokens_per_batch=64
        )
        batches = list(make_dataset(pairs, tokenizer, static))
        assert batches
        for inputs, target_out in batches:
            batch, source_length = inputs["source_ids"].shape
            target_length = target_out.shape[1]
            assert {source_length, target_length} <= set(static.bucket_lengths)
            assert batch == _batch_size_of(source_length, target_length, static)
            assert batch % 2 == 0
            assert inputs["target_ids"].shape == target_out.shape
    assert report.total == 120 and report.kept == len(expected)
    assert report.filtered == 120 - len(expected)


def test_shuffle_is_seeded_and_epochs_differ(fixture_pairs, sp_tokenizer):
    def first_batches(dataset):
        return [t.tolist() for _, t in dataset.take(3).as_numpy_iterator()]

    a = make_dataset(fixture_pairs, sp_tokenizer, SMALL)
    b = make_dataset(fixture_pairs, sp_tokenizer, SMALL)
    assert first_batches(a) == first_batches(b)
    assert first_batches(a) != first_batches(a)  # reshuffled each epoch


@pytest.mark.parametrize("static_shapes", [False, True])
def test_endless_training_batches_are_full_and_keep_every_pair(
    fixture_pairs, sp_tokenizer, static_shapes
):
    config = dataclasses.replace(
        SMALL,
        endless=True,
        static_shapes=static_shapes,
        tokens_per_batch=128,
        cache=True,  # tokenized once, not once a pass
    )
    expected = expected_kept(fixture_pairs, sp_tokenizer, config.max_train_length)
    one_pass = make_dataset(fixture_pairs, sp_tokenizer, config, training=False)
    batches = sum(1 for _ in one_pass)  # evaluation: one pass, partial batches
    # A bucket pair with one pair and batch size n fills its first batch in
    # the n-th pass: n passes' worth of batches shows every pair.
    passes = max(config.bucket_batch_sizes)
    take = passes * batches
    stream = make_dataset(fixture_pairs, sp_tokenizer, config).take(take)
    seen, shapes = epoch_pairs_and_shapes(stream)  # no empty row anywhere
    assert len(shapes) == take
    # Every batch full: its bucket pair's batch size.
    for batch, source_length, target_length in shapes:
        if static_shapes:
            buckets = source_length, target_length
        else:  # the bucket of the batch's longest side
            buckets = (
                _bucket_of(source_length, config),
                _bucket_of(target_length, config),
            )
        assert batch == _batch_size_of(*buckets, config)
    # Nothing dropped, nothing invented. Every pass reads each pair once; a
    # pair's copies wait only in its bucket pair's window (under a batch) and
    # in the shuffle buffer (one), so the counts differ by at most that.
    counts = collections.Counter(seen)
    assert set(counts) == set(expected)
    assert max(counts.values()) - min(counts.values()) <= passes
    # The same stream whenever it is built (what resuming relies on).
    again = make_dataset(fixture_pairs, sp_tokenizer, config).take(take)
    assert epoch_pairs_and_shapes(again) == (seen, shapes)


def test_tuple_format_and_cache(fixture_pairs, sp_tokenizer, tmp_path):
    expected = expected_kept(fixture_pairs, sp_tokenizer, SMALL.max_train_length)
    for cache in (True, str(tmp_path / "cache")):
        config = dataclasses.replace(SMALL, element_format="tuple", cache=cache)
        dataset = make_dataset(fixture_pairs, sp_tokenizer, config, training=False)
        for _ in range(2):  # the second epoch reads the cache
            got = []
            for (source, target_in), target_out in dataset.as_numpy_iterator():
                assert source.shape[0] == target_in.shape[0] == target_out.shape[0]
                for s, t in zip(source, target_out, strict=True):
                    got.append((tuple(s[s != 0]), tuple(t[t != 0])))
            assert sorted(got) == expected
    assert any(p.name.startswith("cache") for p in tmp_path.iterdir())


def test_feeds_a_keras_model(fixture_pairs, sp_tokenizer):
    import keras

    source = keras.Input([None], dtype="int32", name="source_ids")
    target = keras.Input([None], dtype="int32", name="target_ids")
    embed = keras.layers.Embedding(sp_tokenizer.vocab_size, 8)
    context = keras.ops.mean(embed(source), axis=1, keepdims=True)
    logits = keras.layers.Dense(sp_tokenizer.vocab_size)(embed(target) + context)
    model = keras.Model({"source_ids": source, "target_ids": target}, logits)
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    dataset = make_dataset(fixture_pairs, sp_tokenizer, SMALL)
    history = model.fit(dataset, shuffle=False, verbose=0)
    assert np.isfinite(history.history["loss"][0])


@pytest.mark.parametrize("budget", [1200, 5000])
def test_no_batch_exceeds_budget_with_replicas(fixture_pairs, sp_tokenizer, budget):
    config = dataclasses.replace(SMALL, tokens_per_batch=budget, num_replicas=4)
    expected = expected_kept(fixture_pairs, sp_tokenizer, config.max_train_length)
    dataset = make_dataset(fixture_pairs, sp_tokenizer, config)
    _check_dynamic_epoch(dataset, expected, config)  # sizes multiples of 4


def test_keeps_dtype(fixture_pairs, sp_tokenizer):
    spec = make_dataset(fixture_pairs, sp_tokenizer, SMALL).element_spec
    assert spec[0]["source_ids"] == tf.TensorSpec([None, None], tf.int32)
