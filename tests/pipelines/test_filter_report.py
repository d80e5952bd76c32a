import tensorflow as tf

from pipelines import FILTER_REASONS, FilterReport
from pipelines.filter_report import filter_reason


def test_reason_codes():
    def reason(source_length, target_length):
        code = filter_reason(
            tf.zeros([source_length], tf.int32), tf.zeros([target_length], tf.int32), 5
        )
        return FILTER_REASONS[int(code)]

    assert reason(3, 5) == "kept"
    assert reason(1, 9) == "empty_source"
    assert reason(6, 1) == "empty_target"
    assert reason(6, 9) == "source_too_long"
    assert reason(5, 6) == "target_too_long"


def test_report():
    report = FilterReport.from_counts([7, 1, 0, 2, 3])
    assert report.total == 13 and report.kept == 7 and report.filtered == 6
    assert str(report) == (
        "kept 7 of 13 pairs; filtered 6: empty_source=1, empty_target=0, "
        "source_too_long=2, target_too_long=3"
    )
