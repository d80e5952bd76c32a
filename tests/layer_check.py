"""One shared check that every layer of the package passes (BUILD_NOTES.md, "Tests").

`run_layer_check` covers: config and JSON round trip, eager and symbolic calls
with the expected output shape, one `fit` step that changes the weights,
`.keras` save and reload with identical outputs, and a `mixed_bfloat16` call
with float32 variables. Written here because Keras' own helper is private.
"""

import json

import keras
import numpy as np


def run_layer_check(
    layer_cls,
    init_kwargs,
    input_data,
    expected_output_shape,
    call_kwargs=None,
    tmp_path=None,
    expect_trainable_weights=True,
):
    """Runs the shared checks on `layer_cls(**init_kwargs)`.

    Args:
        layer_cls: the layer class.
        init_kwargs: dict of constructor arguments.
        input_data: dict of call-argument name -> numpy array (batch first); the
            arrays become the inputs of a functional model.
        expected_output_shape: tuple, the eager output shape.
        call_kwargs: dict of non-tensor call arguments.
        tmp_path: a directory for the `.keras` file.
        expect_trainable_weights: whether the layer has weights to train.
    """
    call_kwargs = call_kwargs or {}

    # Config and JSON round trip.
    layer = layer_cls(**init_kwargs)
    config = layer.get_config()
    assert layer_cls.from_config(config).get_config() == config
    serialized = json.loads(json.dumps(keras.saving.serialize_keras_object(layer)))
    revived = keras.saving.deserialize_keras_object(serialized)
    assert type(revived) is layer_cls
    assert revived.get_config() == config

    # Eager call.
    eager_output = layer(**input_data, **call_kwargs)
    assert tuple(eager_output.shape) == tuple(expected_output_shape)

    # Symbolic call inside a functional model.
    inputs = {
        name: keras.Input(shape=array.shape[1:], dtype=str(array.dtype), name=name)
        for name, array in input_data.items()
    }
    layer = layer_cls(**init_kwargs)
    outputs = layer(**inputs, **call_kwargs)
    assert tuple(outputs.shape)[1:] == tuple(expected_output_shape)[1:]
    model = keras.Model(inputs, outputs)

    # One fit step changes the weights (or there are none to change).
    assert bool(layer.trainable_weights) == expect_trainable_weights
    if expect_trainable_weights:
        before = [np.array(w) for w in layer.trainable_weights]
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
        # As compile_transformer does: one trace of the train step, not two.
        model.optimizer.build(model.trainable_variables)
        target = np.ones(expected_output_shape, "float32")
        history = model.fit(input_data, target, epochs=1, verbose=0)
        assert np.isfinite(history.history["loss"][0])
        after = [np.array(w) for w in layer.trainable_weights]
        assert any(not np.allclose(b, a) for b, a in zip(before, after, strict=True))

    # .keras save and reload give identical outputs.
    if tmp_path is not None:
        expected = np.array(model(input_data))
        path = str(tmp_path / f"{layer_cls.__name__}.keras")
        model.save(path)
        reloaded = keras.saving.load_model(path)
        np.testing.assert_allclose(np.array(reloaded(input_data)), expected, atol=1e-6)

    # Mixed precision: bfloat16 compute, float32 variables.
    layer = layer_cls(**init_kwargs, dtype="mixed_bfloat16")
    output = layer(**input_data, **call_kwargs)
    assert tuple(output.shape) == tuple(expected_output_shape)
    if keras.backend.is_float_dtype(output.dtype):
        assert keras.backend.standardize_dtype(output.dtype) == "bfloat16"
    for weight in layer.weights:
        assert keras.backend.standardize_dtype(weight.dtype) == "float32"
