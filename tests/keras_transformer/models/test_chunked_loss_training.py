import keras
import numpy as np
import pytest

from keras_transformer.training import compile_transformer
from tests.keras_transformer.training.tiny_setup import reversal_pairs, tiny_transformer


def _fit_tiny(loss_chunk_size, jit_compile="auto"):
    keras.utils.set_random_seed(1)
    # SGD, not Adam: Adam divides by sqrt(v) and so turns float32 rounding
    # in gradients that are exactly zero in theory (the attention key bias:
    # softmax ignores a shift) into full-size steps.
    model = compile_transformer(
        tiny_transformer(dropout=0.0),
        optimizer=keras.optimizers.SGD(0.5),
        jit_compile=jit_compile,
        loss_chunk_size=loss_chunk_size,
    )
    inputs, target = reversal_pairs(24)
    target[:4, -2:] = 0  # some padding in the labels
    # JAX's op-by-op mode (jit off) runs every op, and the loss's chunk loop,
    # from Python: 40 s for two epochs here. Its three updates of one epoch
    # compare the same code paths.
    eager_jax = keras.backend.backend() == "jax" and jit_compile is False
    history = model.fit(
        inputs,
        target,
        batch_size=8,
        epochs=1 if eager_jax else 2,
        verbose=0,
        shuffle=False,
    )
    return model, history.history


@pytest.mark.parametrize("jit_compile", [False, True])
def test_fit_with_the_chunked_loss_equals_fit_on_logits(jit_compile):
    fused_model, fused = _fit_tiny(loss_chunk_size=7, jit_compile=jit_compile)
    plain_model, plain = _fit_tiny(loss_chunk_size=None, jit_compile=jit_compile)
    for name in ("loss", "accuracy", "perplexity", "target_tokens"):
        np.testing.assert_allclose(fused[name], plain[name], rtol=1e-4, err_msg=name)
    for got, want in zip(fused_model.weights, plain_model.weights, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6, err_msg=got.path)
    # The training call returns the decoder output; every other call, logits.
    inputs, _ = reversal_pairs(2)
    assert fused_model(inputs, training=True)["decoder_output"].shape == (2, 7, 16)
    assert fused_model(inputs).shape == (2, 7, 30)
    # Evaluation runs on logits and agrees.
    inputs, target = reversal_pairs(16)
    np.testing.assert_allclose(
        fused_model.evaluate(inputs, target, verbose=0),
        plain_model.evaluate(inputs, target, verbose=0),
        rtol=1e-4,
    )


def test_a_metric_that_needs_logits_is_refused_by_name():
    model = tiny_transformer()
    compile_transformer(model)
    model.compile(
        optimizer="adam",
        loss=model.loss,
        metrics=[keras.metrics.SparseCategoricalAccuracy(name="logit_accuracy")],
    )
    inputs, target = reversal_pairs(8)
    with pytest.raises(ValueError, match="logit_accuracy"):
        model.fit(inputs, target, batch_size=8, epochs=1, verbose=0)


def test_sample_weights_are_refused_by_name():
    model = compile_transformer(tiny_transformer())
    inputs, target = reversal_pairs(8)
    with pytest.raises(ValueError, match="sample_weight="):
        model.fit(
            inputs, target, sample_weight=np.ones(8), batch_size=8, epochs=1, verbose=0
        )


def test_mixed_bfloat16_training_matches_the_loss_on_logits():
    keras.config.set_dtype_policy("mixed_bfloat16")
    # The backend's default: graph mode on TensorFlow CPUs, jit under JAX
    # (JAX's op-by-op mode is the slowest path and adds nothing here).
    _, fused = _fit_tiny(loss_chunk_size=5)
    _, plain = _fit_tiny(loss_chunk_size=None)
    # bfloat16 matmuls on both paths, summed in another order: 1% on the loss.
    np.testing.assert_allclose(fused["loss"], plain["loss"], rtol=1e-2)
    np.testing.assert_allclose(fused["perplexity"], plain["perplexity"], rtol=2e-2)
