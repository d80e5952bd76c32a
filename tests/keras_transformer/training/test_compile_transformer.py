import keras
import numpy as np
import pytest

from keras_transformer import TransformerConfig, build_transformer
from keras_transformer.training import (
    LabelSmoothedCrossEntropy,
    TransformerSchedule,
    compile_transformer,
)


def _model():
    return build_transformer(
        TransformerConfig(
            num_layers=1, d_model=16, d_ff=32, num_heads=2, source_vocab_size=30
        )
    )


def test_the_paper_s_optimiser_schedule_and_loss():
    model = compile_transformer(_model(), label_smoothing=0.2, warmup_steps=10)
    optimizer = model.optimizer
    assert isinstance(optimizer, keras.optimizers.Adam)
    assert (optimizer.beta_1, optimizer.beta_2, optimizer.epsilon) == (0.9, 0.98, 1e-9)
    schedule = optimizer._learning_rate
    assert isinstance(schedule, TransformerSchedule)
    assert (schedule.d_model, schedule.warmup_steps) == (16, 10)
    assert isinstance(model.loss, LabelSmoothedCrossEntropy)
    assert model.loss.label_smoothing == 0.2


def test_a_few_steps_reduce_the_loss_and_report_metrics():
    rng = np.random.default_rng(0)
    source = rng.integers(4, 30, (32, 6)).astype("int32")
    target = np.concatenate([source[:, ::-1], np.full((32, 1), 3)], 1).astype("int32")
    decoder_input = np.concatenate([np.full((32, 1), 2), target[:, :-1]], 1)
    model = compile_transformer(_model(), warmup_steps=5, learning_rate_scale=2.0)
    history = model.fit(
        {"source_ids": source, "target_ids": decoder_input.astype("int32")},
        target,
        batch_size=8,
        epochs=4,
        verbose=0,
    )
    losses = history.history["loss"]
    assert losses[-1] < losses[0]
    assert {"accuracy", "perplexity"} <= set(history.history)


def test_fit_traces_the_train_step_once():
    """The optimizer's variables exist after `compile_transformer`: without an
    explicit strategy Keras would create them in the first trace, and
    `tf.function` would then trace the whole train step again."""
    model = compile_transformer(_model(), warmup_steps=5)
    assert model.optimizer.built
    assert len(model.optimizer.variables) > 2 * len(model.trainable_variables)
    traces = []
    train_step = model.train_step

    def counted(*args):
        traces.append(1)
        return train_step(*args)

    model.train_step = counted
    ids = np.ones((4, 5), "int32")
    model.fit({"source_ids": ids, "target_ids": ids}, ids, epochs=2, verbose=0)
    assert len(traces) == 1


def test_gradient_accumulation_updates_every_n_batches():
    model = compile_transformer(_model(), gradient_accumulation_steps=4)
    assert model.optimizer.gradient_accumulation_steps == 4


def test_compiled_model_saves_and_reloads(tmp_path):
    model = compile_transformer(_model(), warmup_steps=10)
    ids = np.ones((2, 4), "int32")
    model.fit({"source_ids": ids, "target_ids": ids}, ids, epochs=1, verbose=0)
    path = tmp_path / "compiled.keras"
    model.save(path)
    reloaded = keras.saving.load_model(path)
    assert isinstance(reloaded.optimizer._learning_rate, TransformerSchedule)
    assert int(reloaded.optimizer.iterations) == 1
    np.testing.assert_array_equal(
        np.array(reloaded({"source_ids": ids, "target_ids": ids})),
        np.array(model({"source_ids": ids, "target_ids": ids})),
    )


def test_mixed_float16_wraps_the_optimizer_in_loss_scaling():
    keras.config.set_dtype_policy("mixed_float16")
    model = compile_transformer(_model())
    assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)


@pytest.mark.parametrize("bad", [-1.0])
def test_bad_scale(bad):
    with pytest.raises(ValueError, match="scale=-1.0"):
        compile_transformer(_model(), learning_rate_scale=bad)
