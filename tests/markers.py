"""Markers shared by the test files."""

import keras
import pytest


def tensorflow_only(reason):
    """Skips a test (or, as `pytestmark`, a file) off the TensorFlow backend.

    Args:
        reason: str. Why the test needs TensorFlow, shown when skipped.
    """
    return pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason=reason)
