import pytest
import tensorflow as tf

from pipelines.text import transforms
from pipelines.tokenizers.special_tokens import EOS_ID


def _ragged_pairs(pairs):
    """Source pieces as `encode_sources` makes them (eos appended), target
    pieces as the tokenizer makes them."""
    sources = tf.ragged.constant([[*s, EOS_ID] for s, _ in pairs], dtype=tf.int32)
    targets = tf.ragged.constant([t for _, t in pairs], dtype=tf.int32)
    return tf.data.Dataset.from_tensor_slices((sources, targets))


def test_special_ids_and_filter():
    dataset = _ragged_pairs([([5, 6], [7]), ([], [8]), ([5] * 9, [9])])
    dataset = dataset.apply(transforms.add_target_special_ids())
    first = next(iter(dataset))
    assert [x.numpy().tolist() for x in first] == [[5, 6, 3], [2, 7], [7, 3]]
    kept = list(dataset.apply(transforms.filter_by_length(4)))
    assert len(kept) == 1


def test_bucket_static_and_tuple_format():
    dataset = _ragged_pairs([([5] * n, [6] * n) for n in (1, 2, 2, 3, 6, 7)])
    dataset = dataset.apply(transforms.add_target_special_ids())
    dataset = dataset.apply(transforms.bucket_by_token_budget([4, 8], [2, 1], True))
    dataset = dataset.apply(transforms.to_model_inputs("tuple"))
    shapes = [(s.shape.as_list(), t.shape.as_list()) for (s, t), _ in dataset]
    # Lengths with eos/bos: 2, 3, 3, 4 -> bucket 4 (two full batches of 2);
    # 7, 8 -> bucket 8, batch 1.
    assert shapes == [([2, 4], [2, 4])] * 2 + [([1, 8], [1, 8])] * 2


def _bucketed_shapes(pairs, static_shapes):
    dataset = _ragged_pairs(pairs).apply(transforms.add_target_special_ids())
    dataset = dataset.apply(
        transforms.bucket_by_token_budget([4, 8], [4, 2], static_shapes)
    )
    return sorted((s.shape[0], s.shape[1], t.shape[1]) for s, t, _ in dataset)


def test_bucket_pairs_by_each_side():
    # Lengths with eos/bos (source, target): (2, 7), (3, 8) -> buckets (4, 8);
    # (7, 2), (8, 3) -> (8, 4); (2, 2), (3, 3) -> (4, 4). Batch size of a
    # bucket pair is that of its longer bucket: 2 for (4, 8) and (8, 4).
    pairs = [([5] * 1, [6] * 6), ([5] * 6, [6] * 1), ([5] * 2, [6] * 7)]
    pairs += [([5] * 7, [6] * 2), ([5] * 1, [6] * 1), ([5] * 2, [6] * 2)]
    assert _bucketed_shapes(pairs, False) == [(2, 3, 3), (2, 3, 8), (2, 8, 3)]
    # Static: each side padded to its own bucket; the partial (4, 4) batch
    # (2 pairs, batch size 4) filled with two empty rows.
    assert _bucketed_shapes(pairs, True) == [(2, 4, 8), (2, 8, 4), (4, 4, 4)]


def test_static_partial_batch_gets_empty_rows_after_its_pairs():
    pairs = [([5] * 1, [6] * 1), ([7] * 2, [8] * 2), ([9] * 3, [6] * 5)]
    dataset = _ragged_pairs(pairs).apply(transforms.add_target_special_ids())
    dataset = dataset.apply(transforms.bucket_by_token_budget([4, 8], [4, 2], True))
    batches = {
        s.shape[1:] + t_in.shape[1:]: (s, t_in, t_out) for s, t_in, t_out in dataset
    }
    source, target_in, target_out = (x.numpy() for x in batches[(4, 4)])
    assert source.tolist() == [[5, 3, 0, 0], [7, 7, 3, 0], [0] * 4, [0] * 4]
    assert target_in.tolist() == [[2, 6, 0, 0], [2, 8, 8, 0], [0] * 4, [0] * 4]
    assert target_out.tolist() == [[6, 3, 0, 0], [8, 8, 3, 0], [0] * 4, [0] * 4]
    # (4, 8): batch size 2 (bucket 8's), one pair and one empty row.
    source, target_in, _ = (x.numpy() for x in batches[(4, 8)])
    assert source.tolist() == [[9, 9, 9, 3], [0] * 4]
    assert target_in.tolist() == [[2, 6, 6, 6, 6, 6, 0, 0], [0] * 8]


def test_bucket_errors():
    with pytest.raises(ValueError, match=r"len\(batch_sizes\)=1"):
        transforms.bucket_by_token_budget([4, 8], [2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="longer than the last"):
        _bucketed_shapes([([5] * 8, [6])], False)
