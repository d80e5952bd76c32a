import keras
import numpy as np

from keras_transformer import TransformerConfig, build_transformer
from keras_transformer.training import LossScaleLog, compile_transformer


def _model(dtype):
    model = build_transformer(
        TransformerConfig(
            num_layers=1, d_model=16, d_ff=32, num_heads=2, source_vocab_size=30
        ),
        dtype=dtype,
    )
    return compile_transformer(model)


def _batch():
    ids = np.random.default_rng(0).integers(4, 30, (4, 6)).astype("int32")
    return {"source_ids": ids, "target_ids": ids}, ids


def _logged(model):
    log = LossScaleLog()
    log.set_model(model)
    logs = {"loss": 1.0}
    log.on_train_batch_end(0, logs)
    return logs


def test_mixed_float16_skips_a_step_with_an_infinite_gradient_and_halves_the_scale():
    model = _model("mixed_float16")
    assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
    initial_scale = _logged(model)["loss_scale"]
    assert initial_scale == 2.0**15
    # An embedding row beyond float16's range (65,504): its float16 copy is
    # infinite, so are the loss and the gradients of the batch that uses it.
    embedding = model.get_layer("shared_embedding").embeddings
    finite = np.array(embedding)
    embedding.assign(np.where(np.arange(len(finite))[:, None] >= 4, 1e5, finite))
    before = [np.array(w) for w in model.trainable_weights]
    model.train_on_batch(*_batch())
    assert _logged(model)["loss_scale"] == initial_scale / 2
    assert int(model.optimizer.iterations) == 0
    for a, b in zip(before, model.trainable_weights, strict=True):
        np.testing.assert_array_equal(a, np.array(b))
    # A finite batch is applied, at the halved scale.
    embedding.assign(finite)
    model.train_on_batch(*_batch())
    assert int(model.optimizer.iterations) == 1


def test_no_loss_scale_without_float16():
    for dtype in ("float32", "mixed_bfloat16"):
        assert "loss_scale" not in _logged(_model(dtype))
