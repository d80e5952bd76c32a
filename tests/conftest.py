"""Shared test set-up: quiet TensorFlow logs, fixed seeds, float32 by default."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# The package's CPU default (keras_transformer/__init__.py), whatever imports
# TensorFlow first.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

import keras  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _seed_and_policy():
    keras.utils.set_random_seed(1234)
    keras.config.set_dtype_policy("float32")
    yield
    keras.config.set_dtype_policy("float32")
