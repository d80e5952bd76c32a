"""Quiet start-up of the command line: TensorFlow imported without its
start-up lines, library warnings and TensorFlow's Python log off.

TensorFlow 2.21 prints its start-up lines (oneDNN, "Could not find cuda
drivers", `cpu_feature_guard`) through absl before absl's logging is
initialized, twice per process, and `TF_CPP_MIN_LOG_LEVEL` does not reach
them. So unless `--verbose` is given, `import_tensorflow_quietly` imports
TensorFlow with file descriptor 2 pointed at `/dev/null` and restores it
afterwards (an import error is raised after the restore, so its traceback
shows). It must run before anything imports TensorFlow, which is why
`keras_transformer`'s `__init__` imports its submodules lazily and
`cli.main` imports subcommand modules only after this call.
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
    """Imports TensorFlow; unless `verbose`, without its start-up lines, with
    `TF_CPP_MIN_LOG_LEVEL` defaulting to 2 (errors only), TensorFlow's and
    absl's Python loggers at ERROR and Python warnings ignored.

    Args:
        verbose: bool. Keep every line and warning (`--verbose`).
    """
    if verbose:
        import tensorflow  # noqa: F401

        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    warnings.simplefilter("ignore")
    if "tensorflow" not in sys.modules:
        with _stderr_to_devnull():
            import tensorflow  # noqa: F401
    import tensorflow as tf

    tf.get_logger().setLevel(logging.ERROR)  # e.g. tf.function's retracing
    with contextlib.suppress(ImportError):
        from absl import logging as absl_logging

        absl_logging.set_verbosity(absl_logging.ERROR)
