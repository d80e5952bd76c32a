import json

import keras
import numpy as np
import pytest

from keras_transformer import TransformerConfig, build_transformer
from keras_transformer.training import (
    TrainingBackup,
    compile_transformer,
    make_strategy,
)
from keras_transformer.training import training_backup as module
from tests.markers import tensorflow_only


def _model(dropout=0.1, build_optimizer=True):
    model = build_transformer(
        TransformerConfig(
            num_layers=1,
            d_model=8,
            d_ff=16,
            num_heads=2,
            dropout=dropout,
            source_vocab_size=20,
        )
    )
    compile_transformer(model)
    if build_optimizer:
        model.optimizer.build(model.trainable_variables)
    return model


def _backup(model, tmp_path):
    backup = TrainingBackup(str(tmp_path))
    backup.set_model(model)
    return backup


def test_no_backup_means_epoch_zero(tmp_path):
    assert TrainingBackup(str(tmp_path)).restore(_model()) == 0


def test_round_trip_of_weights_optimizer_step_and_seed_states(tmp_path):
    model = _model()
    model.optimizer.iterations.assign(7)
    seeds = [v for v in model.variables if v.path.endswith("seed_generator_state")]
    assert seeds
    for seed in seeds:
        seed.assign(np.array([3, 9]))
    _backup(model, tmp_path).on_epoch_end(2, {"loss": 1.0})
    assert json.loads((tmp_path / "backup.json").read_text()) == {"epoch": 3, "step": 7}

    fresh = _model()
    assert TrainingBackup(str(tmp_path)).restore(fresh) == 3
    assert int(fresh.optimizer.iterations) == 7
    for a, b in zip(model.variables, fresh.variables, strict=True):
        np.testing.assert_array_equal(np.array(a), np.array(b))


def test_only_the_newest_backup_is_kept(tmp_path):
    model = _model()
    backup = _backup(model, tmp_path)
    backup.on_epoch_end(0, {"loss": 1.0})
    backup.on_epoch_end(1, {"loss": 1.0})
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "backup-000002.seeds.npz",
        "backup-000002.weights.h5",
        "backup.json",
    ]


def test_non_finite_loss_keeps_the_last_good_backup(tmp_path, capsys):
    model = _model()
    backup = _backup(model, tmp_path)
    backup.on_epoch_end(0, {"loss": 1.0})
    backup.on_epoch_end(1, {"loss": float("inf")})
    assert json.loads((tmp_path / "backup.json").read_text())["epoch"] == 1
    assert "keeps the last finite state" in capsys.readouterr().out


def test_only_the_chief_writes(tmp_path, monkeypatch):
    """Other workers restore from the shared directory but never write it."""
    model = _model()
    _backup(model, tmp_path).on_epoch_end(0, {"loss": 1.0})
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    monkeypatch.setattr(module, "is_chief", lambda strategy=None: False)
    _backup(model, tmp_path).on_epoch_end(1, {"loss": 1.0})
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert TrainingBackup(str(tmp_path)).restore(_model()) == 1


def test_a_changed_model_is_refused(tmp_path):
    _backup(_model(dropout=0.1), tmp_path).on_epoch_end(0, {"loss": 1.0})
    with pytest.raises(ValueError, match="Was the model changed"):
        TrainingBackup(str(tmp_path)).restore(_model(dropout=0.0))


@tensorflow_only("tf.distribute strategies belong to the TensorFlow backend")
def test_restore_builds_the_optimizer_in_the_models_strategy(tmp_path):
    """A model made in a strategy's scope (here one-device mirrored) resumes:
    its optimizer variables must be created in that scope."""
    model = _model()
    model.optimizer.iterations.assign(4)
    _backup(model, tmp_path).on_epoch_end(0, {"loss": 1.0})
    strategy = make_strategy("mirrored", devices=["/cpu:0"])
    with strategy.scope():
        fresh = _model(build_optimizer=False)  # as before a first `fit`
    assert TrainingBackup(str(tmp_path)).restore(fresh) == 1
    assert int(np.array(fresh.optimizer.iterations)) == 4
    for a, b in zip(model.variables, fresh.variables, strict=True):
        np.testing.assert_array_equal(np.array(a), np.array(b))


def _adam(model):
    optimizer = model.optimizer
    if isinstance(optimizer, keras.optimizers.LossScaleOptimizer):
        return optimizer.inner_optimizer
    return optimizer


@pytest.mark.parametrize(
    "saved, resumed",
    [("float32", "mixed_float16"), ("mixed_float16", "mixed_bfloat16")],
)
def test_the_optimizer_state_carries_across_a_change_of_loss_scaling(
    saved, resumed, tmp_path, capsys
):
    """Keras' `load_weights` skips an optimizer of another layout (Adam vs.
    Adam inside a `LossScaleOptimizer`) with a warning: the step, hence the
    schedule, would restart at 0. The backup loads Adam's state itself."""
    keras.config.set_dtype_policy(saved)
    model = _model()
    ids = np.random.default_rng(0).integers(4, 20, (4, 5)).astype("int32")
    model.fit({"source_ids": ids, "target_ids": ids}, ids, epochs=1, verbose=0)
    _backup(model, tmp_path).on_epoch_end(0, {"loss": 1.0})
    keras.config.set_dtype_policy(resumed)
    fresh = _model()
    assert TrainingBackup(str(tmp_path)).restore(fresh) == 1
    assert "step and moments carry over" in capsys.readouterr().out
    assert int(fresh.optimizer.iterations) == int(model.optimizer.iterations) == 1
    for a, b in zip(_adam(model).variables, _adam(fresh).variables, strict=True):
        np.testing.assert_array_equal(np.array(a), np.array(b))
    for a, b in zip(model.weights, fresh.weights, strict=True):
        np.testing.assert_array_equal(np.array(a), np.array(b))
