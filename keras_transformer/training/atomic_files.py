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


def atomic_save_weights(model, path):
    """`model.save_weights(path)` through a temporary file and `os.replace`."""
    temporary = f"{path}.partial.weights.h5"
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
