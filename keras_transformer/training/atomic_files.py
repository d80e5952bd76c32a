"""Writes that a kill cannot leave half done: write a temporary file, then rename."""

import json
import os


def atomic_save_weights(model, path):
    """`model.save_weights(path)` through a temporary file and `os.replace`."""
    temporary = f"{path}.partial.weights.h5"
    model.save_weights(temporary, overwrite=True)
    os.replace(temporary, path)


def atomic_write_json(data, path):
    """Writes `data` as JSON to `path` through a temporary file and `os.replace`."""
    temporary = f"{path}.partial"
    with open(temporary, "w") as file:
        json.dump(data, file, indent=2, sort_keys=True)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)


def read_json(path):
    with open(path) as file:
        return json.load(file)
