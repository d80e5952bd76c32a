"""Quiet start-up of the command line: TensorFlow imported without its
start-up lines, library warnings and TensorFlow's Python log off.

TensorFlow 2.21 prints its start-up lines (oneDNN, "Could not find cuda
drivers", `cpu_feature_guard`) through absl before absl's logging is
initialized, twice per process, and `TF_CPP_MIN_LOG_LEVEL` does not reach
them. So unless `--verbose` is given, `import_tensorflow_quietly` imports
TensorFlow with file descriptor 2 pointed at `/dev/null` and restores it
afterwards (an import error is raised after the restore, so its traceback
shows); `quiet_logs` then keeps library warnings and TensorFlow's Python
log off while a subcommand runs. The import must come before anything else
imports TensorFlow, which is why `keras_transformer`'s `__init__` imports
its submodules lazily and `cli.main` imports subcommand modules only after
this call.
"""

import contextlib
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


def import_tensorflow_quietly(verbose=False):
    """Imports TensorFlow; unless `verbose`, without its start-up lines and
    with `TF_CPP_MIN_LOG_LEVEL` defaulting to 2 (errors only).

    Args:
        verbose: bool. Keep every line (`--verbose`).
    """
    if not verbose:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if verbose or "tensorflow" in sys.modules:
        import tensorflow  # noqa: F401
    else:
        with _stderr_to_devnull():
            import tensorflow  # noqa: F401


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
