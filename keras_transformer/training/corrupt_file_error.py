"""Files read back are checked, and a bad one is refused naming it.

Checkpoints, backups, averaged weights and JSON records are read by training,
averaging, evaluation and export; a truncated or overwritten file must fail
naming the file and what was expected, never as an h5py or JSON traceback.
"""

import errno
import json
import os
import re

import h5py

# The group of a Keras `.weights.h5` file that holds the model's weights.
MODEL_GROUP = "layers"


class CorruptFileError(ValueError):
    """A file that exists but cannot be used: not HDF5, truncated, not UTF-8,
    not JSON, or without the expected content.

    Args:
        path: str. The file.
        expected: str. What it should be, e.g. `"a Keras .weights.h5 file"`.
        reason: str. What is wrong with it.
        hint: str or `None`. What the user can do about it.
    """

    def __init__(self, path, expected, reason, hint=None):
        self.path = str(path)
        message = f"{path} is not {expected} ({reason})"
        if hint:
            message += f"; {hint}"
        super().__init__(message + f". Received: path={str(path)!r}")


def read_json_file(path, expected="a JSON object"):
    """The JSON object of `path`, checked: UTF-8, valid JSON, an object.

    Raises:
        CorruptFileError: not UTF-8, not JSON, or not a JSON object.
        OSError: the file is missing or unreadable (its `filename` names it).
    """
    with open(path, "rb") as file:
        raw = file.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise CorruptFileError(
            path, f"{expected} in UTF-8", f"invalid UTF-8 at byte {error.start}"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise CorruptFileError(
            path,
            expected,
            f"invalid JSON at line {error.lineno} column {error.colno}: {error.msg}",
        ) from None
    if not isinstance(data, dict):
        raise CorruptFileError(path, expected, f"found a JSON {type(data).__name__}")
    return data


def check_weights_file(path, hint=None):
    """Checks that `path` opens as HDF5 and holds a Keras model's weights.

    A truncated file fails here: HDF5 compares the file's size with the end
    of data recorded in its superblock.

    Args:
        path: str. A `.weights.h5` file.
        hint: str or `None`. What the user can do, appended to the message.

    Raises:
        CorruptFileError: a folder, not HDF5, truncated, or without a
            `layers` group.
        FileNotFoundError: there is no such file (`filename` names it).
    """
    expected = "a Keras .weights.h5 file"
    if os.path.isdir(path):
        raise CorruptFileError(path, expected, "it is a folder", hint)
    if not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT, "No such weights file", str(path))
    try:
        with h5py.File(path, "r") as file:
            has_weights = MODEL_GROUP in file
    except OSError as error:
        # h5py: "Unable to synchronously open file (truncated file: eof = ...)"
        match = re.search(r"\((.*)\)", str(error).splitlines()[0])
        reason = match[1] if match else "not HDF5"
        raise CorruptFileError(path, expected, reason, hint) from None
    if not has_weights:
        raise CorruptFileError(path, expected, "no model weights in it", hint)
