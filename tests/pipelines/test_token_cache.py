import dataclasses
from collections import Counter

import pytest
import tensorflow as tf

from pipelines import (
    FILTER_REASONS,
    BadLineError,
    BatchingConfig,
    FilterReport,
    count_filtered,
    read_token_cache,
    transforms,
    write_token_shard,
)

CONFIG = BatchingConfig(
    tokens_per_batch=512, max_train_length=24, tokenize_batch_size=64
)


def numbered(fixture_pairs):
    return [
        (number, s.decode(), t.decode())
        for number, (s, t) in enumerate(fixture_pairs.as_numpy_iterator(), start=1)
    ]


def as_tuples(dataset):
    return [tuple(tuple(x.numpy().tolist()) for x in element) for element in dataset]


@pytest.mark.parametrize("ratio", [None, 1.5])
def test_a_shard_holds_what_make_dataset_keeps_and_counts_what_it_drops(
    tmp_path, fixture_pairs, sp_tokenizer, ratio
):
    config = dataclasses.replace(CONFIG, max_length_ratio=ratio)
    path = str(tmp_path / "shard.tfrecord")
    counts = write_token_shard(numbered(fixture_pairs), sp_tokenizer, config, path)
    # The second path: the in-memory pipeline's tokenization and filter.
    report = count_filtered(fixture_pairs, sp_tokenizer, config)
    assert FilterReport.from_counts(dict(counts)) == report
    assert report.filtered > 0 and (ratio is None) == (report.length_ratio == 0)
    expected = (
        fixture_pairs.apply(transforms.tokenize_pairs(sp_tokenizer))
        .apply(transforms.add_target_special_ids())
        .apply(transforms.filter_by_length(config.max_train_length, ratio))
    )
    assert as_tuples(read_token_cache([path])) == as_tuples(expected)
    assert not list(tmp_path.glob("*.partial"))


def test_shards_are_read_together(tmp_path, fixture_pairs, sp_tokenizer):
    pairs = numbered(fixture_pairs)
    paths = [str(tmp_path / f"shard-{i}.tfrecord") for i in range(3)]
    for index, path in enumerate(paths):
        write_token_shard(
            pairs[index * 100 : (index + 1) * 100], sp_tokenizer, CONFIG, path
        )
    together = as_tuples(read_token_cache(paths))
    one = str(tmp_path / "one.tfrecord")
    write_token_shard(pairs, sp_tokenizer, CONFIG, one)
    assert sorted(together) == sorted(as_tuples(read_token_cache([one])))
    with pytest.raises(ValueError, match="at least one shard"):
        read_token_cache([])


def test_an_empty_shard_is_written(tmp_path, sp_tokenizer):
    path = str(tmp_path / "empty.tfrecord")
    assert write_token_shard([], sp_tokenizer, CONFIG, path) == Counter()
    assert as_tuples(read_token_cache([path])) == []


@pytest.mark.parametrize(
    "long_side, reason", [("source", "source_too_long"), ("target", "target_too_long")]
)
def test_fail_names_the_first_pair_the_filter_drops(
    tmp_path, sp_tokenizer, long_side, reason
):
    long_text = " ".join(["Datei öffnen"] * 40)
    pairs = [(7, "Open", "Öffnen"), (8, long_text, "kurz"), (9, "x", long_text)]
    if long_side == "target":
        pairs = [pairs[0], pairs[2], pairs[1]]

    def origin(line_id):
        return f"corpus.tsv at line {line_id}"

    path = str(tmp_path / "s.tfrecord")
    line = 8 if long_side == "source" else 9
    side = long_side.capitalize()
    message = f"^{side} longer than max_train_length in corpus.tsv at line {line}\\."
    with pytest.raises(BadLineError, match=message):
        write_token_shard(pairs, sp_tokenizer, CONFIG, path, "fail", origin)
    counts = write_token_shard(pairs, sp_tokenizer, CONFIG, path, "skip", origin)
    assert counts == {"kept": 1, "source_too_long": 1, "target_too_long": 1}
    assert set(counts) <= set(FILTER_REASONS)
    assert len(as_tuples(read_token_cache([path]))) == 1
    assert tf.io.gfile.exists(path)
