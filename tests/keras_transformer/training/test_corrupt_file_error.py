"""Files read back are checked and a bad one is named."""

import h5py
import numpy as np
import pytest

from keras_transformer.training.corrupt_file_error import (
    CorruptFileError,
    check_weights_file,
    read_json_file,
)


@pytest.mark.parametrize(
    "content, words",
    [
        (b"", "invalid JSON at line 1 column 1"),
        (b'{"a": 1', "invalid JSON"),
        (b"\xff\xfe{}", "invalid UTF-8 at byte 0"),
        (b"[1, 2]", "found a JSON list"),
    ],
)
def test_a_bad_json_file_is_named(tmp_path, content, words):
    path = tmp_path / "record.json"
    path.write_bytes(content)
    with pytest.raises(CorruptFileError, match=words) as info:
        read_json_file(path)
    assert info.value.path == str(path) and f"Received: path='{path}'" in str(
        info.value
    )


def _weights(path):
    with h5py.File(path, "w") as file:
        file.create_dataset("layers/dense/vars/0", data=np.zeros((64, 64)))
    return path


def test_a_whole_weights_file_passes_and_a_truncated_one_is_named(tmp_path):
    good = _weights(tmp_path / "good.weights.h5")
    check_weights_file(good)
    data = good.read_bytes()
    bad = tmp_path / "bad.weights.h5"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptFileError, match="truncated file") as info:
        check_weights_file(bad, hint="move it")
    assert str(bad) in str(info.value) and "; move it." in str(info.value)


@pytest.mark.parametrize("kind", ["empty", "binary", "folder", "no weights"])
def test_other_bad_weights_files_are_named(tmp_path, kind):
    path = tmp_path / "x.weights.h5"
    if kind == "folder":
        path.mkdir()
    elif kind == "no weights":
        with h5py.File(path, "w") as file:
            file.create_group("other")
    else:
        path.write_bytes(b"" if kind == "empty" else bytes(range(256)) * 8)
    with pytest.raises(CorruptFileError, match="is not a Keras .weights.h5 file"):
        check_weights_file(path)


def test_a_missing_weights_file_is_a_file_not_found_error_naming_it(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        check_weights_file(tmp_path / "no.weights.h5")
    assert info.value.filename == str(tmp_path / "no.weights.h5")
