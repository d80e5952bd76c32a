import numpy as np
import pytest

from keras_transformer.training import TargetTokens, ThroughputLogger
from keras_transformer.training import throughput as module


def test_target_tokens_counts_real_tokens():
    metric = TargetTokens()
    metric.update_state(np.array([[5, 6, 0], [7, 0, 0]]))
    metric.update_state(np.array([[1, 1, 1]]))
    assert float(metric.result()) == 6.0
    metric.reset_state()
    assert float(metric.result()) == 0.0


def test_logger_divides_tokens_by_epoch_time(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(module.time, "perf_counter", lambda: clock[0])
    logger = ThroughputLogger()
    logger.on_epoch_begin(0)
    clock[0] = 102.0
    logs = {"target_tokens": 500.0}
    logger.on_train_batch_end(0, logs)
    assert logs["tokens_per_second"] == pytest.approx(250.0)
    clock[0] = 104.0
    logs = {"target_tokens": 1200.0}
    logger.on_epoch_end(0, logs)
    assert logs["tokens_per_second"] == pytest.approx(300.0)
    logger.on_epoch_end(0, {})  # no metric: nothing added, no error
