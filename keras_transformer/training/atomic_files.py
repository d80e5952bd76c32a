"""Writes that a kill cannot leave half done: write a temporary file, then rename.

A failed write (a full disk, say) removes its temporary file, so nothing
half-written stays behind and the file of the previous write is untouched; a
full disk is reported as `OSError(ENOSPC)` naming the file being written,
whatever library (h5py, TensorFlow) raised it.
"""

import contextlib
import errno
import json
import os
import shutil

import numpy as np

from keras_transformer.training.corrupt_file_error import read_json_file


def is_disk_full(error):
    """Whether `error` (or an exception it was raised from) is a full disk:
    `ENOSPC`/`EDQUOT`, or h5py's and TensorFlow's wording of it."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if getattr(error, "errno", None) in (errno.ENOSPC, errno.EDQUOT):
            return True
        text = str(error)
        if "No space left on device" in text or "errno = 28," in text:
            return True
        error = error.__cause__ or error.__context__
    return False


@contextlib.contextmanager
def publishing(temporary, path):
    """Context for writing `temporary` before it is renamed to `path`: on any
    failure `temporary` (a file or folder) is removed, and a full disk is
    raised again as `OSError(ENOSPC, ..., path)`."""
    try:
        yield temporary
    except BaseException as error:
        if os.path.isdir(temporary):
            shutil.rmtree(temporary, ignore_errors=True)
        elif os.path.lexists(temporary):
            os.remove(temporary)
        if isinstance(error, Exception) and is_disk_full(error):
            raise OSError(
                errno.ENOSPC, "The disk is full (no space left on device)", path
            ) from error
        raise


def check_free_space(path, needed):
    """Raises `OSError(ENOSPC)` naming `path` when its folder's filesystem
    has less than `needed` bytes free.

    HDF5 must not meet a full disk: Keras leaves the h5py file of a failed
    `save_weights` open, and HDF5 then crashed the interpreter at exit
    (SIGSEGV) closing the file it could not flush, so a full disk is refused
    before a weights file is written. (A disk that fills during the write,
    from another process, is still HDF5's to meet.)
    """
    free = shutil.disk_usage(os.path.dirname(os.path.abspath(path))).free
    if free < needed:
        raise OSError(
            errno.ENOSPC,
            f"The disk is full (no space left on device): {needed:,} bytes "
            f"needed, {free:,} free",
            path,
        )


def weights_file_bytes(model):
    """An upper estimate of `model.save_weights`' file size: the weights'
    bytes plus HDF5's metadata (4 KiB a weight, 64 KiB a file)."""
    data = sum(
        int(np.prod(weight.shape)) * np.dtype(weight.dtype).itemsize
        for weight in model.weights
    )
    return data + 4096 * len(model.weights) + 65536


def atomic_save_weights(model, path):
    """`model.save_weights(path)` through a temporary file and `os.replace`."""
    temporary = f"{path}.partial.weights.h5"
    check_free_space(path, weights_file_bytes(model))
    with publishing(temporary, path):
        model.save_weights(temporary, overwrite=True)
    os.replace(temporary, path)


def atomic_write_json(data, path):
    """Writes `data` as JSON to `path` through a temporary file and `os.replace`."""
    temporary = f"{path}.partial"
    with publishing(temporary, path):
        with open(temporary, "w", encoding="utf-8") as file:
            json.dump(data, file, indent=2, sort_keys=True)
            file.flush()
            os.fsync(file.fileno())
    os.replace(temporary, path)


def atomic_write_text(text, path):
    """Writes `text` (UTF-8) to `path` through a temporary file and `os.replace`."""
    temporary = f"{path}.partial"
    with publishing(temporary, path):
        with open(temporary, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
    os.replace(temporary, path)


def read_json(path):
    """The JSON object of `path`; a corrupt file fails naming it
    (`CorruptFileError`)."""
    return read_json_file(path)
