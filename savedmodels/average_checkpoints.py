"""Checkpoint averaging (paper §6.1): the element-wise mean of the last K."""

import json
import os

import h5py
import numpy as np

from keras_transformer.training import record_path
from keras_transformer.training.atomic_files import (
    check_free_space,
    publishing,
    read_json,
)
from keras_transformer.training.corrupt_file_error import (
    MODEL_GROUP,
    CorruptFileError,
    check_weights_file,
)


def average_checkpoints(checkpoint_paths, output_path):
    """Writes the element-wise mean of the model weights of several checkpoints.

    Paper §6.1: "For the base models, we used a single model obtained by
    averaging the last 5 checkpoints, which were written at 10-minute
    intervals. For the big models, we averaged the last 20 checkpoints."

    Works on Keras `.weights.h5` files (as written by `model.save_weights`, e.g.
    `keras_transformer.training.RotatingCheckpoints`): every float weight of the
    model is averaged in float64 and stored in its own dtype; the optimizer
    state is left out (an averaged model is for evaluation and export). When a
    checkpoint has its JSON record beside it (`ckpt-<step>.json`), the records'
    `model_config` entries must agree, apart from `NOT_ARCHITECTURE` (the
    training precision, the model's name).

    Args:
        checkpoint_paths: list of `.weights.h5` paths, at least one.
        output_path: str. A new `.weights.h5` path; it must not exist.

    Returns:
        `output_path`.

    Raises:
        ValueError: no checkpoints; `output_path` exists or is an input; the
            checkpoints hold different weights (names or shapes) or records
            with different model configs.
    """
    paths = [os.fspath(p) for p in checkpoint_paths]
    output_path = os.fspath(output_path)
    if not paths:
        raise ValueError("Nothing to average. Received: checkpoint_paths=[]")
    if not output_path.endswith(".weights.h5"):
        raise ValueError(
            "The output must be a `.weights.h5` file. "
            f"Received: output_path={output_path}"
        )
    if os.path.abspath(output_path) in {os.path.abspath(p) for p in paths}:
        raise ValueError(
            "Refusing to overwrite an input checkpoint. "
            f"Received: output_path={output_path}"
        )
    if os.path.exists(output_path):
        raise ValueError(
            "Refusing to overwrite an existing file. "
            f"Received: output_path={output_path}"
        )
    _check_records(paths)

    weights = [_model_weights(path) for path in paths]
    reference = weights[0]
    for path, other in zip(paths[1:], weights[1:], strict=True):
        if other.keys() != reference.keys():
            difference = sorted(set(other) ^ set(reference))[:3]
            raise ValueError(
                f"{path} holds other weights than {paths[0]} (e.g. {difference})."
            )
        for name, value in other.items():
            if value.shape != reference[name].shape:
                raise ValueError(
                    f"Weight {name} has shape {value.shape} in {path} but "
                    f"{reference[name].shape} in {paths[0]}."
                )

    temporary = f"{output_path}.partial"
    # HDF5 must not meet a full disk (`check_free_space`); a failure removes
    # the temporary file: nothing half written stays, under either name.
    needed = sum(v.nbytes for v in reference.values()) + 4096 * len(reference)
    check_free_space(output_path, needed + 65536)
    with publishing(temporary, output_path):
        with h5py.File(paths[0], "r") as first, h5py.File(temporary, "w") as out:
            for key, value in first.attrs.items():
                out.attrs[key] = value
            for name, value in reference.items():
                if np.issubdtype(value.dtype, np.floating):
                    stack = [w[name].astype("float64") for w in weights]
                    value = np.mean(stack, axis=0).astype(value.dtype)
                else:  # e.g. integer seed states: the last checkpoint's
                    value = weights[-1][name]
                out.create_dataset(f"{MODEL_GROUP}/{name}", data=value)
            _copy_group_attributes(first, out)
    os.replace(temporary, output_path)
    return output_path


def _model_weights(path):
    """`{dataset path under "layers/": array}` of one `.weights.h5` file."""
    if not os.path.exists(path):
        raise ValueError(f"Checkpoint not found. Received: {path}")
    check_weights_file(path)  # HDF5, whole, with model weights; else named
    values = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            values[name] = obj[()]

    try:
        with h5py.File(path, "r") as file:
            file[MODEL_GROUP].visititems(visit)
    except OSError as error:  # damaged inside, past the header HDF5 checks
        reason = " ".join(str(error).split())[:200]
        raise CorruptFileError(
            path, "a readable Keras .weights.h5 file", reason
        ) from None
    return values


def _copy_group_attributes(source, target):
    def visit(name, obj):
        if isinstance(obj, h5py.Group) and name in target:
            for key, value in obj.attrs.items():
                target[name].attrs[key] = value

    source.visititems(visit)


# Model config entries that do not change the weights: the dtype policy is
# the training precision (float32 variables in every one, so a run resumed in
# another precision averages), and Keras numbers the name of a second model
# built in one process ("transformer_1").
NOT_ARCHITECTURE = ("dtype", "name", "trainable")


def _check_records(paths):
    configs = {}
    for path in paths:
        weights_record = record_path(path)
        if os.path.exists(weights_record):
            config = read_json(weights_record).get("model_config")
            if config is not None:
                configs[path] = {
                    k: v for k, v in config.items() if k not in NOT_ARCHITECTURE
                }
    if len({json.dumps(c, sort_keys=True) for c in configs.values()}) > 1:
        raise ValueError(
            "The checkpoints were written by models with different configs: "
            + "; ".join(f"{p}: {c}" for p, c in configs.items())
        )
