import json
import os

import numpy as np
import pytest

from keras_transformer import TransformerConfig, build_transformer
from keras_transformer.training import (
    RotatingCheckpoints,
    compile_transformer,
    list_checkpoints,
)
from keras_transformer.training import rotating_checkpoints as module


def _model():
    model = build_transformer(
        TransformerConfig(
            num_layers=1, d_model=8, d_ff=16, num_heads=2, source_vocab_size=20
        )
    )
    compile_transformer(model)
    model.optimizer.build(model.trainable_variables)
    return model


def _callback(model, tmp_path, **kwargs):
    callback = RotatingCheckpoints(str(tmp_path), record={"config": "tiny"}, **kwargs)
    callback.set_model(model)
    callback.set_params({"epochs": 1000})
    callback.on_train_begin()
    return callback


def _at_step(model, callback, step, loss=1.0):
    model.optimizer.iterations.assign(step)
    callback.on_epoch_end(0, {"loss": loss})


def test_every_n_steps_keeps_the_last_k_with_records(tmp_path):
    model = _model()
    callback = _callback(model, tmp_path, every_steps=10, every_minutes=None, keep=2)
    for step in range(5, 45, 5):
        _at_step(model, callback, step)
    names = [os.path.basename(p) for p in list_checkpoints(tmp_path)]
    assert names == ["ckpt-00000030.weights.h5", "ckpt-00000040.weights.h5"]
    assert sorted(os.listdir(tmp_path)) == sorted(
        names + ["ckpt-00000030.json", "ckpt-00000040.json"]
    )
    record = json.loads((tmp_path / "ckpt-00000040.json").read_text())
    assert record == {"config": "tiny", "step": 40}


def test_every_n_minutes(tmp_path, monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(module.time, "monotonic", lambda: clock[0])
    model = _model()
    callback = _callback(model, tmp_path, every_minutes=10.0)
    _at_step(model, callback, 3)
    clock[0] = 599.0
    _at_step(model, callback, 6)
    assert list_checkpoints(tmp_path) == []
    clock[0] = 601.0
    _at_step(model, callback, 9)
    assert [os.path.basename(p) for p in list_checkpoints(tmp_path)] == [
        "ckpt-00000009.weights.h5"
    ]


def test_non_finite_loss_writes_nothing(tmp_path):
    model = _model()
    callback = _callback(model, tmp_path, every_steps=1)
    _at_step(model, callback, 5, loss=float("nan"))
    assert list_checkpoints(tmp_path) == []


def test_a_checkpoint_reloads_into_a_fresh_model(tmp_path):
    model = _model()
    callback = _callback(model, tmp_path, every_steps=1)
    _at_step(model, callback, 1)
    fresh = _model()
    fresh.load_weights(list_checkpoints(tmp_path)[-1])
    for a, b in zip(model.weights, fresh.weights, strict=True):
        np.testing.assert_array_equal(np.array(a), np.array(b))


def test_only_the_chief_writes(tmp_path, monkeypatch):
    """Other workers write nothing (the directory is shared) but keep time."""
    monkeypatch.setattr(module, "is_chief", lambda strategy=None: False)
    model = _model()
    callback = _callback(model, tmp_path, every_steps=10, every_minutes=None)
    _at_step(model, callback, 10)
    assert not tmp_path.exists() or not os.listdir(tmp_path)
    assert callback._last_step == 10


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="every_steps=None, every_minutes=None"):
        RotatingCheckpoints(str(tmp_path), every_steps=None, every_minutes=None)
    with pytest.raises(ValueError, match="keep=0"):
        RotatingCheckpoints(str(tmp_path), keep=0)
