"""The README's code examples run (each block that is self-contained)."""

import pathlib
import re

import numpy as np

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_layer_reuse_example_builds_a_working_model():
    (block,) = [b for b in _python_blocks() if "classifier = keras.Model" in b]
    namespace = {}
    exec(block, namespace)
    classifier = namespace["classifier"]
    ids = np.array([[5, 6, 7, 0], [8, 9, 0, 0]], "int32")
    assert tuple(classifier(ids).shape) == (2, 2)


def test_model_example_parameter_count_is_true():
    (block,) = [b for b in _python_blocks() if "count_params()" in b]
    assert "63,082,496" in block  # checked by tests/.../models/test_builder.py
    setup = block.split("logits =")[0]
    namespace = {}
    exec(
        setup.replace("model.count_params()", "count = model.count_params()"), namespace
    )
    assert namespace["count"] == 63_082_496


def test_first_two_commands_are_demo_then_tests():
    commands = re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S)
    assert "keras-transformer demo" in commands[0]
    assert "pytest" in commands[1]
    ci = (README.parent / ".ci" / "run").read_text()
    test_command = commands[1].split("&& ", 2)[-1].strip()
    assert test_command in ci
