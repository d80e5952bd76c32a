"""Position-wise feed-forward network (paper §3.3)."""

import keras

from keras_transformer.layers.hash_dropout import HashDropout
from keras_transformer.layers.layer_utils import (
    check_positive_int,
    check_rate,
    clone_initializer,
)


@keras.saving.register_keras_serializable(package="keras_transformer")
class PositionWiseFeedForward(keras.layers.Layer):
    """Two linear maps with a ReLU in between, applied at every position.

    Paper §3.3, Eq. (2): FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, with inner
    size d_ff (2048 in the base model) and output size d_model. The optional
    `activation_dropout` on the inner activations is tensor2tensor's
    `relu_dropout`; the paper does not use it (default `0.0`).

    Args:
        intermediate_dim: int. The inner size d_ff.
        activation: str or callable. Defaults to `"relu"` as in the paper.
        activation_dropout: float. Dropout on the inner activations. Defaults
            to `0.0`.
        kernel_initializer: initializer for both kernels. Defaults to
            `"glorot_uniform"`.
        bias_initializer: initializer for both biases. Defaults to `"zeros"`.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: tensor `[B, T, D]`.
        training: bool. Whether dropout is active.

    Returns:
        A tensor `[B, T, D]`.

    Example:

    >>> ffn = PositionWiseFeedForward(intermediate_dim=16)
    >>> ffn(keras.ops.ones((2, 3, 8))).shape
    (2, 3, 8)
    """

    def __init__(
        self,
        intermediate_dim,
        activation="relu",
        activation_dropout=0.0,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int("intermediate_dim", intermediate_dim)
        check_rate("activation_dropout", activation_dropout)
        self.intermediate_dim = intermediate_dim
        self.activation = keras.activations.get(activation)
        self.activation_dropout = activation_dropout
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)

    def build(self, inputs_shape):
        hidden_dim = inputs_shape[-1]
        self.intermediate_dense = keras.layers.Dense(
            self.intermediate_dim,
            activation=self.activation,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            bias_initializer=clone_initializer(self.bias_initializer),
            dtype=self.dtype_policy,
            name="intermediate_dense",
        )
        self.intermediate_dense.build(inputs_shape)
        self.activation_dropout_layer = HashDropout(
            self.activation_dropout, dtype=self.dtype_policy, name="activation_dropout"
        )
        self.output_dense = keras.layers.Dense(
            hidden_dim,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            bias_initializer=clone_initializer(self.bias_initializer),
            dtype=self.dtype_policy,
            name="output_dense",
        )
        self.output_dense.build((*inputs_shape[:-1], self.intermediate_dim))
        self.built = True

    def call(self, inputs, training=None):
        # [B, T, D] -> [B, T, d_ff] -> [B, T, D]
        x = self.intermediate_dense(inputs)
        x = self.activation_dropout_layer(x, training=training)
        return self.output_dense(x)

    def compute_output_shape(self, inputs_shape):
        return inputs_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "intermediate_dim": self.intermediate_dim,
                "activation": keras.activations.serialize(self.activation),
                "activation_dropout": self.activation_dropout,
                "kernel_initializer": keras.initializers.serialize(
                    self.kernel_initializer
                ),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            }
        )
        return config
