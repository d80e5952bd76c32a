"""Process-wide CPU defaults applied when the package is imported.

- TensorFlow's oneDNN CPU kernels (`TF_ENABLE_ONEDNN_OPTS=1`) unless the
  variable is already set. TensorFlow enables them by itself only on CPUs
  with AVX-512 VNNI, BF16 or AMX; on AVX2 machines they made fp32 matmuls
  about 35% faster and the training and decoding benchmarks 10-25% faster
  (BUILD_NOTES.md, "Speed"). Set `TF_ENABLE_ONEDNN_OPTS=0` to keep Eigen's
  kernels.
- glibc's mmap threshold fixed at 128 KiB (`mallopt`), unless
  `MALLOC_MMAP_THRESHOLD_` is set. glibc starts at 128 KiB but raises the
  threshold to the size of every mmapped block freed (up to 32 MiB), after
  which such blocks come from its arenas and, once freed, stay resident. XLA's
  compile of the `base` training step frees that way about 0.5 GB that then
  stayed resident under the step's own peak; with the fixed threshold the
  benchmark's peak RSS fell by about 0.5 GB at the same speed (BUILD_NOTES.md,
  "Speed").
"""

import ctypes
import os

# glibc's malloc.h
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 128 * 1024


def fix_mmap_threshold(threshold=MMAP_THRESHOLD_BYTES):
    """Sets glibc's mmap threshold, turning off its dynamic growth.

    Returns:
        `True` when glibc's `mallopt` accepted it; `False` where there is no
        glibc (`mallopt` missing or refusing) or `MALLOC_MMAP_THRESHOLD_` is
        set (then glibc already applied the user's value).
    """
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is None:
        return False
    return mallopt(_M_MMAP_THRESHOLD, int(threshold)) == 1


def apply():
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
    fix_mmap_threshold()
