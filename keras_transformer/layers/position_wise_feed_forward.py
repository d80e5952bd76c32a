"""Position-wise feed-forward network (paper §3.3)."""

import keras
from keras import ops, tree

from keras_transformer.layers.hash_dropout import HashDropout
from keras_transformer.layers.layer_utils import clone_initializer
from keras_transformer.validation import check_positive_int, check_rate


@keras.saving.register_keras_serializable(package="keras_transformer")
class PositionWiseFeedForward(keras.layers.Layer):
    """Two linear maps with a ReLU in between, applied at every position.

    Paper §3.3, Eq. (2): FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, with inner
    size d_ff (2048 in the base model) and output size d_model. The optional
    `activation_dropout` on the inner activations is tensor2tensor's
    `relu_dropout`; the paper does not use it (default `0.0`).

    In training, a ReLU network without activation dropout runs the ReLU
    and the second projection as one custom-gradient op
    (`relu_then_project`) that keeps only the pre-activation for the
    backward pass: XLA otherwise keeps both the pre-activation and the ReLU
    output, `2 x [B*T, d_ff]` per layer (0.8 GB of the `base` step's 2.4 GB
    of temporaries at 128 x 32 tokens). Same numbers, same weights.

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
        # The activation is applied in `call`, so that training can fuse it
        # with the second projection.
        self.intermediate_dense = keras.layers.Dense(
            self.intermediate_dim,
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
        if training and self._fuses_relu_and_projection():
            dense = self.output_dense
            # [B, T, d_ff] -> [B*T, d_ff] -> [B*T, D] -> [B, T, D]
            outputs = relu_then_project(
                ops.reshape(x, (-1, self.intermediate_dim)),
                ops.cast(dense.kernel, x.dtype),
            )
            outputs = outputs + ops.cast(dense.bias, x.dtype)
            return ops.reshape(outputs, ops.shape(inputs))
        x = self.activation(x)
        x = self.activation_dropout_layer(x, training=training)
        return self.output_dense(x)

    def _fuses_relu_and_projection(self):
        dense = self.output_dense
        return (
            self.activation is keras.activations.relu
            and self.activation_dropout == 0.0
            and dense.use_bias
            and not getattr(dense, "quantization_mode", None)
            and not getattr(dense, "lora_enabled", False)
        )

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


@ops.custom_gradient
def relu_then_project(pre_activation, kernel):
    """`relu(pre_activation) @ kernel`, keeping only `pre_activation` for backward.

    Autodiff (and XLA's fusion of `max(x, 0)` into the ReLU gradient) keeps
    both the pre-activation and the ReLU output of every feed-forward layer
    alive until the backward pass. This op's gradient recomputes the ReLU
    output from the pre-activation instead, for the kernel's gradient. The
    recomputation reads the upstream gradient (a `0 *` term), so that XLA's
    scheduler cannot hoist it into the forward pass, where it would be one
    more saved `[N, F]` tensor per layer; a non-finite upstream gradient,
    whose gradients are non-finite anyway, makes the kernel's all NaN.

    Args:
        pre_activation: `[N, F]`, `x W_1 + b_1` of Eq. (2).
        kernel: `[F, D]`, `W_2`, in the same dtype.

    Returns:
        `[N, D]`.
    """
    outputs = ops.matmul(ops.relu(pre_activation), kernel)

    def grad(*upstream):
        # TensorFlow passes one upstream gradient per output, JAX a tuple.
        upstream = tree.flatten(upstream)[0]
        active = pre_activation > 0
        zero = ops.sum(upstream[:1, :1]) * 0
        recomputed = ops.where(active, pre_activation, zero)
        # [N, F]^T x [N, D] -> [F, D]; [N, D] x [F, D]^T -> [N, F]. Einsum
        # contracts in place: no transposed copies in graph mode.
        kernel_grad = ops.einsum("nf,nd->fd", recomputed, upstream)
        pre_activation_grad = ops.where(
            active, ops.einsum("nd,fd->nf", upstream, kernel), 0
        )
        return pre_activation_grad, kernel_grad

    return outputs, grad
