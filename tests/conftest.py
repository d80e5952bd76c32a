"""Shared test set-up: quiet TensorFlow logs, fixed seeds, float32 by default."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# The package's CPU default (keras_transformer/__init__.py), whatever imports
# TensorFlow first.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
# Test-run speed, not behaviour (BUILD_NOTES.md, "Tests"): XLA compiles
# without LLVM's optimization passes (a quarter of the JAX pass's time is
# compiling), and each pytest-xdist worker runs TensorFlow's kernels on one
# thread, so that two workers do not share two cores four ways. Subprocesses
# inherit both. A value set by the caller wins.
if "--xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " --xla_backend_optimization_level=0"
    ).strip()
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")

import keras  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _cache_folder(tmp_path_factory):
    """The package's file cache (`KERAS_TRANSFORMER_CACHE`: TensorFlow's op
    registry, savedmodels/op_compatibility.py) in the run's temporary folder,
    shared by the pytest-xdist workers and the subprocesses they start, not
    in the user's home. A value set by the caller wins."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the folder above every worker's own
    os.environ.setdefault("KERAS_TRANSFORMER_CACHE", str(base / "package-cache"))


@pytest.fixture(autouse=True)
def _seed_and_policy():
    keras.utils.set_random_seed(1234)
    keras.config.set_dtype_policy("float32")
    yield
    keras.config.set_dtype_policy("float32")


def pytest_collection_modifyitems(config, items):
    """Files with a `slow` test run first, each file's tests in their order (a
    stable sort). Under `--dist loadfile` a worker takes a whole file at a
    time: with the long subprocess files last (the README's commands were the
    very last file), one worker ran them while the other waited."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)
