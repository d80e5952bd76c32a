import json
import pathlib

import numpy as np
import pytest

from keras_transformer import TransformerConfig, build_transformer
from keras_transformer.training import compile_transformer, record_path
from savedmodels import average_checkpoints

CONFIG = TransformerConfig(
    num_layers=1, d_model=8, d_ff=16, num_heads=2, source_vocab_size=20
)


def _checkpoints(tmp_path, count=3, config=CONFIG):
    """Saves `count` checkpoints of one model with weights set to known values."""
    model = build_transformer(config)
    compile_transformer(model)
    model.optimizer.build(model.trainable_variables)
    rng = np.random.default_rng(0)
    paths, values = [], []
    for i in range(count):
        current = [rng.normal(size=w.shape).astype("float32") for w in model.weights]
        for weight, value in zip(model.weights, current, strict=True):
            weight.assign(value)
        path = tmp_path / f"ckpt-{i:08d}.weights.h5"
        model.save_weights(path)
        (tmp_path / f"ckpt-{i:08d}.json").write_text(
            json.dumps({"model_config": config.to_dict(), "step": i})
        )
        paths.append(path)
        values.append(current)
    return paths, values


def test_average_is_the_element_wise_mean(tmp_path):
    paths, values = _checkpoints(tmp_path)
    output = average_checkpoints(paths, tmp_path / "average.weights.h5")
    model = build_transformer(CONFIG)
    model.load_weights(output)
    for i, weight in enumerate(model.weights):
        expected = np.mean([v[i] for v in values], axis=0)
        np.testing.assert_allclose(np.array(weight), expected, rtol=1e-6, atol=1e-7)


def test_one_checkpoint_averages_to_itself(tmp_path):
    paths, values = _checkpoints(tmp_path, count=1)
    model = build_transformer(CONFIG)
    model.load_weights(average_checkpoints(paths, tmp_path / "one.weights.h5"))
    for weight, value in zip(model.weights, values[0], strict=True):
        np.testing.assert_array_equal(np.array(weight), value)


def test_refuses_to_overwrite(tmp_path):
    paths, _ = _checkpoints(tmp_path, count=2)
    with pytest.raises(ValueError, match="overwrite an input"):
        average_checkpoints(paths, paths[0])
    existing = tmp_path / "exists.weights.h5"
    existing.write_bytes(b"precious")
    with pytest.raises(ValueError, match="overwrite an existing file"):
        average_checkpoints(paths, existing)
    assert existing.read_bytes() == b"precious"


def test_different_shapes_are_refused(tmp_path):
    (tmp_path / "a").mkdir()
    small, _ = _checkpoints(tmp_path / "a")
    wider = TransformerConfig(
        num_layers=1, d_model=8, d_ff=24, num_heads=2, source_vocab_size=20
    )
    (tmp_path / "b").mkdir()
    other, _ = _checkpoints(tmp_path / "b", count=1, config=wider)
    # Same names, other shapes; records removed so the shape check speaks.
    for path in (small[0], other[0]):
        pathlib.Path(record_path(path)).unlink()
    with pytest.raises(ValueError, match="has shape"):
        average_checkpoints([small[0], other[0]], tmp_path / "avg.weights.h5")


def test_different_configs_are_refused(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, _ = _checkpoints(tmp_path / "a", count=1)
    dropout = TransformerConfig(
        num_layers=1,
        d_model=8,
        d_ff=16,
        num_heads=2,
        source_vocab_size=20,
        dropout=0.3,
    )
    second, _ = _checkpoints(tmp_path / "b", count=1, config=dropout)
    with pytest.raises(ValueError, match="different configs"):
        average_checkpoints([first[0], second[0]], tmp_path / "avg.weights.h5")


def test_bad_inputs(tmp_path):
    with pytest.raises(ValueError, match="checkpoint_paths=\\[\\]"):
        average_checkpoints([], tmp_path / "avg.weights.h5")
    with pytest.raises(ValueError, match="not found"):
        average_checkpoints(
            [tmp_path / "missing.weights.h5"], tmp_path / "o.weights.h5"
        )
    with pytest.raises(ValueError, match="output_path="):
        average_checkpoints([tmp_path / "x.weights.h5"], tmp_path / "avg.h5")
