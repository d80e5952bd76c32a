"""Quiet start-up of the command line: TensorFlow imported without its
start-up lines, library warnings and TensorFlow's Python log off.

TensorFlow 2.21 prints its start-up lines (oneDNN, "Could not find cuda
drivers", `cpu_feature_guard`) through absl before absl's logging is
initialized, twice per process, and `TF_CPP_MIN_LOG_LEVEL` does not reach
them. So unless `--verbose` is given, `import_tensorflow_quietly` imports
TensorFlow with file descriptor 2 pointed at `/dev/null` and restores it
afterwards (an import error is raised after the restore, so its traceback
shows); `quiet_logs` then keeps library warnings and TensorFlow's Python
log off while a subcommand runs, and `native_log_filter` drops the log lines
TensorFlow's C++ code writes later (e.g. "failed call to cuInit"). The
import must come before anything else imports TensorFlow, which is why
`keras_transformer`'s `__init__` imports its submodules lazily and
`cli.main` imports subcommand modules only after this call.

In a process of its own (the console script), the command line also keeps
Python's cyclic garbage collector off the objects TensorFlow's import makes
(`collector_after_imports` around `import_tensorflow_quietly`) and, for
`translate` and `parse`, off what is left at exit (`freeze_for_exit`): the
import makes about 450,000 long-lived objects, which the collector traversed
in 1.4-1.7 s of collections during the import and again in 1.7 s of the
interpreter's collections at exit (docs/experiment-log.md, "Garbage collection
at a command's start and exit").
"""

import contextlib
import gc
import logging
import os
import sys
import warnings


@contextlib.contextmanager
def _stderr_to_devnull():
    """Points file descriptor 2 at `/dev/null` for the block."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def import_tensorflow_quietly(verbose=False, without=()):
    """Imports TensorFlow; unless `verbose`, without its start-up lines and
    with `TF_CPP_MIN_LOG_LEVEL` defaulting to 2 (errors only).

    Args:
        verbose: bool. Keep every line (`--verbose`).
        without: names of optional packages that TensorFlow and Keras import
            when installed and a command does not use (`LEAN_IMPORTS`): kept
            out of this import (they then see them as absent), importable
            again afterwards. No effect if TensorFlow is imported already.
    """
    if not verbose:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if "tensorflow" in sys.modules:
        return
    blocked = [name for name in without if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # `import name` raises ImportError
    try:
        if verbose:
            import tensorflow  # noqa: F401
        else:
            with _stderr_to_devnull():
                import tensorflow  # noqa: F401
    finally:
        for name in blocked:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]


@contextlib.contextmanager
def collector_after_imports():
    """The imports inside the block run without the cyclic garbage
    collector, and what they made is then left out of its collections
    (`gc.freeze`): modules, functions and classes live for the whole
    process, so traversing them finds nothing to free. For a process the
    command line owns only; the collector is back on after the block (if it
    was on before)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def freeze_for_exit():
    """Leaves every object alive now out of the collections the interpreter
    runs as it shuts down. Their memory goes back with the process; what a
    cycle held unflushed would not be flushed, so only once every output is
    closed (`translate`, `parse`: written and renamed before they return)."""
    gc.freeze()


# What `translate` and `parse` keep out of TensorFlow's import: TensorFlow
# Lite imports JAX where it is installed and Keras imports matplotlib's
# pyplot, a noticeable part of the start-up time, and neither command draws
# or uses JAX (figures in BUILD_NOTES.md, "Whole-process parse and
# translate").
LEAN_IMPORTS = ("jax", "matplotlib")


def lean_imports(names, environ=None):
    """`names` without the Keras backend's own package (`jax` when Keras runs
    on JAX: `process_defaults.keras_backend`, read from `environ` or the
    process' environment, not from an imported Keras)."""
    from keras_transformer.process_defaults import keras_backend

    backend = keras_backend(os.environ if environ is None else environ)
    return tuple(name for name in names if name != backend)


# What TensorFlow's C++ code writes to file descriptor 2 while a subcommand
# runs: absl-format lines of levels I, W and E ("E0000 00:00:1796... 10503
# cuda_platform.cc:52] failed call to cuInit ..."), and absl's note that it
# is not initialized. Fatal (F) lines and anything else pass.
_NATIVE_LOG_FILTER = r"""
import re, sys
drop = re.compile(
    r"^([IWE]\d{4} [\d:.]+ +\d+ [^ \]]+:\d+\] "
    r"|WARNING: All log messages before absl::InitializeLog\(\) is called)"
)
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    if not drop.match(line.decode("utf-8", "replace")):
        out.write(line)
        out.flush()
"""


@contextlib.contextmanager
def native_log_filter(verbose=False):
    """For the block, unless `verbose`: TensorFlow's own log lines written to
    file descriptor 2 after start-up (a failed `cuInit` on a machine without
    a GPU, oneDNN notes) are dropped; every other byte written there (Python
    errors and tracebacks, fatal native errors, child processes' output)
    still reaches stderr. The lines go through a small filter process, which
    survives a crash of this one and forwards what was written before it.
    """
    if verbose:
        yield
        return
    import subprocess

    sys.stderr.flush()
    saved = os.dup(2)
    try:
        filter_process = subprocess.Popen(
            [sys.executable, "-c", _NATIVE_LOG_FILTER],
            stdin=subprocess.PIPE,
            stdout=saved,
            stderr=saved,
            env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        )
    except OSError:  # no filter: leave stderr as it is
        os.close(saved)
        yield
        return
    os.dup2(filter_process.stdin.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        filter_process.stdin.close()
        filter_process.wait(timeout=60)


@contextlib.contextmanager
def quiet_logs(verbose=False):
    """For the block, unless `verbose`: Python warnings ignored and
    TensorFlow's and absl's Python loggers at ERROR (e.g. tf.function's
    retracing warning). Both are restored afterwards, so a program that calls
    `cli.main` in-process keeps its own settings."""
    if verbose:
        yield
        return
    import tensorflow as tf
    from absl import logging as absl_logging

    logger = tf.get_logger()
    level, absl_level = logger.level, absl_logging.get_verbosity()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logger.setLevel(logging.ERROR)
        absl_logging.set_verbosity(absl_logging.ERROR)
        try:
            yield
        finally:
            logger.setLevel(level)
            absl_logging.set_verbosity(absl_level)
