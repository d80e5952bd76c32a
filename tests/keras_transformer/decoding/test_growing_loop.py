import numpy as np
import pytest
from keras import ops

from keras_transformer.decoding.growing_loop import growing_while_loop, segment_ends


@pytest.mark.parametrize(
    "max_length,first_segment,expected",
    [
        (40, 8, [8, 16, 32, 40]),
        (32, 8, [8, 16, 32]),
        (82, 8, [8, 16, 32, 64, 82]),
        (5, 8, [5]),
        (40, None, [40]),
        (3, 1, [1, 2, 3]),
    ],
)
def test_segment_ends_double_up_to_the_maximum(max_length, first_segment, expected):
    assert segment_ends(max_length, first_segment) == expected


@pytest.mark.parametrize("first_segment", [0, -2, 2.5])
def test_segment_ends_rejects_a_bad_first_segment(first_segment):
    with pytest.raises(ValueError, match=f"first_segment={first_segment}"):
        segment_ends(10, first_segment)


def _loop(max_length, grow_cache_fn, first_segment, stop_at=None, cache_length=None):
    """Writes index + 1 at position `index` of the cache and records each
    step's cache length; stops at `stop_at` if given."""
    stop_at = max_length if stop_at is None else stop_at

    def cond(index, lengths, cache):
        return ops.less(index, stop_at)

    def body(index, lengths, cache):
        cache = ops.slice_update(cache, [index], ops.reshape(index + 1, (1,)))
        lengths = ops.slice_update(
            lengths, [index], ops.reshape(ops.shape(cache)[0], (1,))
        )
        return index + 1, lengths, cache

    state = (
        ops.convert_to_tensor(0, "int32"),
        ops.zeros((max_length,), "int32"),
        ops.zeros((cache_length or max_length,), "int32"),
    )
    return growing_while_loop(
        cond, body, state, max_length, grow_cache_fn, first_segment
    )


def _grow(cache, length):
    return ops.pad(cache, [[0, length - cache.shape[0]]])


def test_cache_grows_by_segments_and_ends_like_a_plain_loop():
    index, lengths, cache = _loop(11, _grow, 2, cache_length=2)
    _, _, plain = _loop(11, None, None)
    assert int(index) == 11
    np.testing.assert_array_equal(np.array(cache), np.array(plain))
    np.testing.assert_array_equal(np.array(cache), np.arange(1, 12))
    # Steps 0-1 see 2 positions, 2-3 see 4, 4-7 see 8, 8-10 see all 11.
    np.testing.assert_array_equal(
        np.array(lengths), [2, 2, 4, 4, 8, 8, 8, 8, 11, 11, 11]
    )


def test_early_stop_skips_the_remaining_segments():
    index, lengths, cache = _loop(11, _grow, 2, stop_at=3, cache_length=2)
    assert int(index) == 3
    np.testing.assert_array_equal(np.array(cache)[:4], [1, 2, 3, 0])
    np.testing.assert_array_equal(np.array(lengths)[:4], [2, 2, 4, 0])
