"""XLA's persistent compilation cache, and the compilations of a training run.

A train step under XLA (`jit_compile=True`) is compiled once per input shape.
TensorFlow can keep the compiled executables on disk and load them in a later
process instead of compiling again: the flag
`--tf_xla_persistent_cache_directory` of `TF_XLA_FLAGS`, one file per
executable (`xla_compile_cache__*.pb`). TensorFlow reads `TF_XLA_FLAGS` once,
when the process runs its first TensorFlow function (a `tf.data` map counts),
so `use_compilation_cache` must run before that. `XlaCompileLog` then counts
the files a run adds, which is how it tells a compilation from a step that
loaded its executable from the cache; `align_trace_names` keeps the cache's
keys the same in a fresh and in a resumed run.
"""

import os
import time

import keras

from keras_transformer.training.distribution import has_accelerator

CACHE_FLAG = "--tf_xla_persistent_cache_directory"
CACHE_FILE_PREFIX = "xla_compile_cache__"


def use_compilation_cache(directory):
    """Points XLA's persistent compilation cache at `directory`.

    Sets `TF_XLA_FLAGS` (keeping its other flags). A directory already named
    there wins: a user's own cache is kept. It takes effect only if no
    TensorFlow function has run in this process yet (TensorFlow reads the
    flags once); `XlaCompileLog` reports a cache that stays unused.

    Args:
        directory: str. Created if missing.

    Returns:
        The cache directory in effect for the flags (`directory`, or the one
        `TF_XLA_FLAGS` already named).
    """
    flags = os.environ.get("TF_XLA_FLAGS", "").split()
    for flag in flags:
        if flag.startswith(CACHE_FLAG + "="):
            return flag.split("=", 1)[1]
    os.makedirs(directory, exist_ok=True)
    os.environ["TF_XLA_FLAGS"] = " ".join([*flags, f"{CACHE_FLAG}={directory}"])
    return directory


def cached_executables(directory):
    """The number of compiled executables in the cache `directory` (0 if it
    does not exist)."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return 0
    return sum(name.startswith(CACHE_FILE_PREFIX) for name in names)


class XlaCompileLog(keras.callbacks.Callback):
    """Times the train steps that compiled a new XLA executable.

    A step compiled if the cache directory gained a file during it; its whole
    wall time counts as compile time (the step's own run is a small part of
    it). The running total is added to the batch and epoch logs as
    `xla_compile_s`, so the progress bar and TensorBoard show it, and the
    counts are kept in `compilations` and `compile_seconds`. At the end of
    training, with `verbose`, one line says how many shapes compiled and in how
    long, and how many executables the cache holds.

    Args:
        cache_dir: str. The directory `use_compilation_cache` returned.
        verbose: bool. Print the summary line. Defaults to `True`.
    """

    def __init__(self, cache_dir, verbose=True):
        super().__init__()
        self.cache_dir = cache_dir
        self.verbose = verbose
        self.compilations = 0
        self.compile_seconds = 0.0
        self.cache_in_use = None  # unknown until a step ran with an empty cache

    def on_train_begin(self, logs=None):
        self._files = cached_executables(self.cache_dir)

    def on_train_batch_begin(self, batch, logs=None):
        self._step_start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        files = cached_executables(self.cache_dir)
        if files > self._files:
            self.compilations += files - self._files
            self.compile_seconds += time.perf_counter() - self._step_start
            self.cache_in_use = True
        elif files == 0:
            # An XLA step ran and wrote nothing: TF_XLA_FLAGS was read before
            # `use_compilation_cache` set it (or the cache is not writable).
            self.cache_in_use = False
        self._files = files
        self._add_total(logs)

    def on_epoch_end(self, epoch, logs=None):
        self._add_total(logs)

    def on_train_end(self, logs=None):
        if not self.verbose:
            return
        if self.cache_in_use is False:
            print(
                f"XLA: the compilation cache {self.cache_dir} stayed empty "
                "(TensorFlow read TF_XLA_FLAGS before it was set: a TensorFlow "
                "function ran earlier in this process); compile times were not "
                "measured"
            )
            return
        print(
            f"XLA: {self.compilations} batch shape(s) compiled in this run, "
            f"{self.compile_seconds:.1f} s; {self._files} in the compilation "
            f"cache {self.cache_dir}"
        )

    def _add_total(self, logs):
        if logs is not None:
            logs["xla_compile_s"] = self.compile_seconds


def resolve_jit_compile(jit_compile):
    """`jit_compile` for `model.compile`, with `"auto"` decided.

    `"auto"` means XLA on a machine with an accelerator (GPU or TPU, Keras'
    own rule) and graph mode on CPUs only: on CPUs the XLA train step over
    the bucketed pipeline measured no faster than graph mode, and
    every batch shape costs a compilation (BUILD_NOTES.md, "XLA and graph mode").

    Returns:
        bool.
    """
    if jit_compile != "auto":
        return bool(jit_compile)
    return has_accelerator()


TRACE_NAME_ALIGNMENT = 1 << 18


def align_trace_names():
    """Advances TensorFlow's naming counter to the next multiple of 2^18.

    XLA's persistent cache keys an executable by its function's name and HLO,
    and TensorFlow names traced functions (`one_step_on_data_6498`, its loops)
    with a process-wide counter, which counts every function traced before:
    a fresh run that first prepared its data has traced more than the same run
    resumed later, so the resumed run's names, and keys, differ, and every
    shape compiles again. Called just before `model.fit` (`fit_resumable` does
    under XLA), this makes the names of the train step the same in both.
    TensorFlow has no public API for the counter; this calls
    `tensorflow.python.framework.ops.uid` until the counter gets there (at
    most 2^18 calls, once per `fit`).

    Returns:
        The counter's new value.
    """
    from tensorflow.python.framework import ops  # noqa: PLC0415

    value = ops.uid()
    target = (value // TRACE_NAME_ALIGNMENT + 1) * TRACE_NAME_ALIGNMENT
    while value < target:
        value = ops.uid()
    return value
