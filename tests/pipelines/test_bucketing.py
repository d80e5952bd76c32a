import pytest

from pipelines import geometric_bucket_lengths, token_budget_batch_sizes


def test_default_lengths():
    lengths = geometric_bucket_lengths()
    assert lengths[:14] == list(range(8, 21)) + [22]
    assert lengths[-3:] == [215, 236, 256]
    assert len(lengths) == 42
    assert geometric_bucket_lengths(10, 8, 2.0) == [8, 10]


def test_batch_sizes_budget_and_replicas():
    lengths = geometric_bucket_lengths()
    sizes = token_budget_batch_sizes(lengths)
    assert sizes[0] == 25_000 // 8 and sizes[-1] == 25_000 // 256
    eight = token_budget_batch_sizes(lengths, num_replicas=8)
    for length, size, single in zip(lengths, eight, sizes, strict=True):
        assert size % 8 == 0 and size * length <= 25_000 and single - size < 8


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: geometric_bucket_lengths(min_length=0), "min_length=0"),
        (lambda: geometric_bucket_lengths(4, 8), "max_length=4"),
        (lambda: geometric_bucket_lengths(scale=1.0), "scale=1.0"),
        (lambda: token_budget_batch_sizes([8], num_replicas=0), "num_replicas=0"),
        (lambda: token_budget_batch_sizes([8, 256], 1000, 8), "tokens_per_batch=1000"),
    ],
)
def test_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
