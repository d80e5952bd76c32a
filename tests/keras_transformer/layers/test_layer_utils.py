import keras
import numpy as np
import pytest

from keras_transformer.layers.layer_utils import (
    clone_initializer,
    head_dims,
    project,
    static_or_dynamic_dims,
)


def test_head_dims_derives_d_model_over_h():
    assert head_dims(512, 8) == (64, 64)
    assert head_dims(512, 8, key_dim=16) == (16, 64)  # Table 3 row B1
    assert head_dims(30, 4, key_dim=8, value_dim=8) == (8, 8)
    with pytest.raises(ValueError, match="d_model=30, num_heads=4"):
        head_dims(30, 4)


def test_clone_initializer_is_a_fresh_equal_copy():
    initializer = keras.initializers.GlorotUniform(seed=3)
    clone = clone_initializer(initializer)
    assert clone is not initializer
    assert clone.get_config() == initializer.get_config()


def test_static_sizes_are_python_ints_and_unknown_ones_tensors():
    """Known sizes come back as ints, with nothing added to the graph; an
    unknown one as a scalar from the tensor's run-time shape."""
    x = keras.ops.zeros((2, 3, 4))
    assert static_or_dynamic_dims(x, (0, 2)) == (2, 4)
    if keras.backend.backend() != "tensorflow":
        return
    import tensorflow as tf

    def sizes(t):
        before = len(tf.compat.v1.get_default_graph().get_operations())
        known = static_or_dynamic_dims(t, (1, 2))
        made = len(tf.compat.v1.get_default_graph().get_operations()) - before
        assert known == (3, 4) and made == 0
        (rows,) = static_or_dynamic_dims(t, (0,))
        assert tf.is_tensor(rows)
        return rows

    traced = tf.function(sizes, input_signature=[tf.TensorSpec((None, 3, 4))])
    assert int(traced(tf.zeros((5, 3, 4)))) == 5


@pytest.mark.parametrize("activation", [None, "relu"])
def test_project_equals_the_layer_call(activation):
    """`project` (one 2-D matmul) gives the layer's own numbers: a Dense on
    `[B, T, D]` and an `EinsumDense` contracting two axes; a Dense with an
    activation keeps its own call; an empty sequence stays empty."""
    rng = np.random.default_rng(0)
    inputs = rng.normal(size=(2, 3, 8)).astype("float32")
    dense = keras.layers.Dense(5, activation=activation)
    expected = keras.ops.convert_to_numpy(dense(inputs))  # builds it
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(project(dense, inputs, 1)), expected, atol=1e-5
    )
    einsum = keras.layers.EinsumDense(
        "abcd,cde->abe", (None, 6), bias_axes="e", activation=activation
    )
    heads = rng.normal(size=(2, 3, 2, 4)).astype("float32")
    expected = keras.ops.convert_to_numpy(einsum(heads))
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(project(einsum, heads, 2)), expected, atol=1e-5
    )
    # Empty sequences keep their shape (a reshape cannot infer -1 there).
    assert tuple(project(dense, np.zeros((2, 0, 8), "float32"), 1).shape) == (2, 0, 5)
