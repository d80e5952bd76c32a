import os

from keras_transformer.training.atomic_files import atomic_write_json, read_json


def test_atomic_write_json_replaces_whole_and_leaves_no_partial_file(tmp_path):
    path = tmp_path / "state.json"
    atomic_write_json({"epoch": 1}, str(path))
    atomic_write_json({"epoch": 2, "step": 10}, str(path))
    assert read_json(str(path)) == {"epoch": 2, "step": 10}
    assert os.listdir(tmp_path) == ["state.json"]
