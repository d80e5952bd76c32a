import pytest
import tensorflow as tf

from pipelines import FILTER_REASONS, FilterReport
from pipelines.text.filter_report import filter_reason, filter_reasons


def test_reason_codes():
    def reason(source_length, target_length, ratio=None):
        code = filter_reason(
            tf.zeros([source_length], tf.int32),
            tf.zeros([target_length], tf.int32),
            5,
            ratio,
        )
        return FILTER_REASONS[int(code)]

    assert reason(3, 5) == "kept"
    assert reason(1, 9) == "empty_source"
    assert reason(6, 1) == "empty_target"
    assert reason(6, 9) == "source_too_long"
    assert reason(5, 6) == "target_too_long"
    # Pieces without the special ids: 1 source piece, 4 target pieces.
    assert reason(2, 5, ratio=4.0) == "kept"
    assert reason(2, 5, ratio=3.9) == "length_ratio"
    assert reason(5, 2, ratio=3.9) == "length_ratio"
    # Earlier reasons win over the ratio.
    assert reason(2, 6, ratio=1.0) == "target_too_long"


def test_reasons_are_elementwise_like_the_one_pair_function():
    sources = [3, 1, 6, 6, 5, 2, 4]
    targets = [5, 9, 1, 9, 6, 5, 4]
    codes = filter_reasons(tf.constant(sources), tf.constant(targets), 5, 3.0)
    singles = [
        int(filter_reason(tf.zeros([s]), tf.zeros([t]), 5, 3.0))
        for s, t in zip(sources, targets, strict=True)
    ]
    assert codes.numpy().tolist() == singles == [0, 1, 2, 3, 4, 5, 0]


def test_report():
    report = FilterReport.from_counts([7, 1, 0, 2, 3])
    assert report.total == 13 and report.kept == 7 and report.filtered == 6
    assert report.length_ratio == report.invalid_utf8 == report.malformed_line == 0
    assert str(report) == (
        "kept 7 of 13 pairs; filtered 6: empty_source=1, source_too_long=2, "
        "target_too_long=3"
    )
    assert str(FilterReport.from_counts([4])) == "kept 4 of 4 pairs; filtered 0"


def test_report_from_a_dict_of_reasons():
    report = FilterReport.from_counts({"kept": 5, "invalid_utf8": 2, "length_ratio": 1})
    assert (report.total, report.filtered) == (8, 3)
    assert report.skipped == {"length_ratio": 1, "invalid_utf8": 2}
    with pytest.raises(ValueError, match="Unknown filter reasons.*'typo'"):
        FilterReport.from_counts({"kept": 1, "typo": 2})
