import dataclasses

import pytest

from pipelines import BatchingConfig


def test_paper_defaults():
    config = BatchingConfig()
    assert config.tokens_per_batch == 25_000 and config.max_train_length == 256
    assert config.bucket_lengths[0] == 8 and config.bucket_lengths[-1] == 256
    assert config.bucket_batch_sizes[0] == 3125
    assert not config.static_shapes and config.element_format == "dict"


def test_replace_and_errors():
    config = dataclasses.replace(BatchingConfig(), num_replicas=8)
    assert all(size % 8 == 0 for size in config.bucket_batch_sizes)
    with pytest.raises(ValueError, match="element_format='list'"):
        BatchingConfig(element_format="list")
    with pytest.raises(ValueError, match="shuffle_buffer_size=0"):
        BatchingConfig(shuffle_buffer_size=0)
    with pytest.raises(ValueError, match="tokens_per_batch=100"):
        BatchingConfig(tokens_per_batch=100)
