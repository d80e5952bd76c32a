"""Process-wide CPU tuning: explicit calls for programs; importing the package
applies only the documented environment default below (BUILD_NOTES.md,
"Packages").

- `tune_memory()` fixes glibc's mmap threshold at 128 KiB (`mallopt`), unless
  `MALLOC_MMAP_THRESHOLD_` is set. glibc starts at 128 KiB but raises the
  threshold to the size of every mmapped block freed (up to 32 MiB), after
  which such blocks come from its arenas and, once freed, stay resident. XLA's
  compile of the `base` training step frees that way memory that then
  stayed resident under the step's own peak; with the fixed threshold the
  benchmark's peak RSS fell at the same speed (docs/experiment-log.md,
  "glibc's mmap threshold").
  The command line's training commands (`train`, `demo`) and the training
  benchmarks call it first; a library user who trains in their own program may call it
  too (it changes the memory behaviour of the whole process, so the choice
  is theirs). Not for decoding: every allocation over the threshold is then
  a fresh mmap, which made the parsing search slower (docs/experiment-log.md,
  "glibc's mmap threshold").
- `ONEDNN_DEFAULT`: `import keras_transformer` sets the environment default
  `TF_ENABLE_ONEDNN_OPTS=1` (`os.environ.setdefault`, so a value the user set
  wins), the one process setting the package touches on import. TensorFlow
  reads it when it is first imported, so it takes effect only when
  `keras_transformer` is imported before TensorFlow (or Keras); TensorFlow
  enables oneDNN by itself only on CPUs with AVX-512 VNNI, BF16 or AMX, and
  on AVX2 machines its kernels made fp32 matmuls and the training and
  decoding benchmarks faster (docs/experiment-log.md, "oneDNN on an AVX2 CPU"). Set
  `TF_ENABLE_ONEDNN_OPTS=0` to keep Eigen's kernels. Imported after
  TensorFlow, with the variable unset and oneDNN off, the package warns
  (`UserWarning`) that its default came too late, where Keras runs on
  TensorFlow (`keras_backend()`; on JAX, TensorFlow serves only the input
  pipeline and the warning would be noise).
"""

import ctypes
import json
import os
import sys
import warnings

# glibc's malloc.h
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 128 * 1024
ONEDNN_DEFAULT = ("TF_ENABLE_ONEDNN_OPTS", "1")


def tune_memory(threshold=MMAP_THRESHOLD_BYTES):
    """Sets glibc's mmap threshold, turning off its dynamic growth.

    Args:
        threshold: int. Bytes. Defaults to 128 KiB, glibc's own start value.

    Returns:
        `True` when glibc's `mallopt` accepted it; `False` where there is no
        glibc (`mallopt` missing or refusing) or `MALLOC_MMAP_THRESHOLD_` is
        set (then glibc already applied the user's value).

    Examples:
        >>> from keras_transformer.process_defaults import tune_memory
        >>> tune_memory()  # first thing in a training program
        True
    """
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is None:
        return False
    return mallopt(_M_MMAP_THRESHOLD, int(threshold)) == 1


def set_onednn_default():
    """`os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")` (see the module
    docstring); called by `import keras_transformer`.

    Warns (`UserWarning`) when TensorFlow was imported first, the variable
    is unset and oneDNN is off: the default came too late for this process.
    """
    name, value = ONEDNN_DEFAULT
    if name in os.environ:
        return
    os.environ[name] = value
    if (
        "tensorflow" in sys.modules
        and onednn_enabled() is False
        and keras_backend() in (None, "tensorflow")
    ):
        warnings.warn(
            "TensorFlow was imported before keras_transformer, so its oneDNN "
            "CPU kernels are off in this process: TensorFlow reads "
            f"{name} when it is imported, and it turns oneDNN on by itself "
            "only on CPUs with AVX-512 VNNI, BF16 or AMX. On this CPU the "
            f"package's default ({name}={value}) makes decoding and training "
            'faster (BUILD_NOTES.md, "Packages"). Import keras_transformer '
            "before tensorflow and keras, or set the variable before Python "
            f"starts (0 keeps TensorFlow's own kernels). Received: {name} unset, "
            "tensorflow already imported.",
            stacklevel=2,
        )


def keras_backend(environ=None):
    """The Keras backend of this process, read as Keras reads it: the
    imported `keras`' own answer; before Keras is imported, `KERAS_BACKEND`,
    else the `backend` of `$KERAS_HOME/keras.json` (or `~/.keras/keras.json`,
    then `/tmp/.keras/keras.json`); `None` where none is set (Keras then
    takes TensorFlow). Reading it imports nothing.

    Args:
        environ: optional mapping in place of `os.environ` (and then the
            imported `keras` is not asked).
    """
    if environ is None:
        keras = sys.modules.get("keras")
        config = getattr(keras, "config", None)
        if config is not None:
            return config.backend()
        environ = os.environ
    backend = environ.get("KERAS_BACKEND") or None  # Keras ignores it empty
    if backend is not None:
        return backend
    if "KERAS_HOME" in environ:
        homes = [environ["KERAS_HOME"]]
    else:  # Keras' fallback where the home folder is not writable
        homes = [os.path.join(os.path.expanduser("~"), ".keras"), "/tmp/.keras"]
    for home in homes:
        try:
            with open(os.path.join(home, "keras.json"), encoding="utf-8") as f:
                return json.load(f).get("backend")
        except (OSError, ValueError, AttributeError):
            continue
    return None


def onednn_enabled():
    """Whether TensorFlow runs its oneDNN CPU kernels in this process: `True`
    or `False` once TensorFlow is imported (it decides then), `None` before,
    or where its build cannot tell."""
    if "tensorflow" not in sys.modules:
        return None
    try:
        from tensorflow.python.util import _pywrap_util_port  # noqa: PLC0415
    except ImportError:
        return None
    is_enabled = getattr(_pywrap_util_port, "IsMklEnabled", None)
    return None if is_enabled is None else bool(is_enabled())
