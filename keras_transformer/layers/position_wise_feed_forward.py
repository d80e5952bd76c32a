"""Position-wise feed-forward network (paper §3.3)."""

import keras
from keras import ops, tree

from keras_transformer.layers.hash_dropout import HashDropout
from keras_transformer.layers.layer_utils import clone_initializer, project
from keras_transformer.validation import check_positive_int, check_rate


@keras.saving.register_keras_serializable(package="keras_transformer")
class PositionWiseFeedForward(keras.layers.Layer):
    """Two linear maps with a ReLU in between, applied at every position.

    Paper §3.3, Eq. (2): FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, with inner
    size d_ff (2048 in the base model) and output size d_model. The optional
    `activation_dropout` on the inner activations is tensor2tensor's
    `relu_dropout`; the paper does not use it (default `0.0`).

    In training, a ReLU network without activation dropout runs as one
    custom-gradient op (`rematerialized_feed_forward`) that keeps only its
    input for the backward pass and recomputes the inner activations there.
    Autodiff keeps the `[B*T, d_ff]` pre-activation of every layer (XLA, the
    ReLU output too): 32 MiB per layer at the `base` step's 128 x 32 tokens,
    against 8 MiB for the input. The recomputation is one more `x W_1`
    matmul per layer, about 3% of the `base` step's FLOPs. Same numbers, same
    weights.

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

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §3.3 (Eq. 2).

    Examples:
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
        if training and self._rematerializes_in_training():
            first, second = self.intermediate_dense, self.output_dense
            dtype = self.compute_dtype
            # [B, T, D] -> [B*T, D] -> [B*T, D] -> [B, T, D]
            outputs = rematerialized_feed_forward(
                ops.reshape(inputs, (-1, ops.shape(inputs)[-1])),
                ops.cast(first.kernel, dtype),
                ops.cast(first.bias, dtype),
                ops.cast(second.kernel, dtype),
            )
            outputs = outputs + ops.cast(second.bias, dtype)
            return ops.reshape(outputs, ops.shape(inputs))
        # [B, T, D] -> [B, T, d_ff] -> [B, T, D], each a 2-D matmul
        x = project(self.intermediate_dense, inputs, 1)
        x = self.activation(x)
        x = self.activation_dropout_layer(x, training=training)
        return project(self.output_dense, x, 1)

    def _rematerializes_in_training(self):
        dense_layers = (self.intermediate_dense, self.output_dense)
        return (
            self.activation is keras.activations.relu
            and self.activation_dropout == 0.0
            and all(dense.use_bias for dense in dense_layers)
            and not any(getattr(d, "quantization_mode", None) for d in dense_layers)
            and not any(getattr(d, "lora_enabled", False) for d in dense_layers)
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


def rematerialized_feed_forward(inputs, kernel_1, bias_1, kernel_2):
    """`relu(inputs W_1 + b_1) W_2` (Eq. (2) without `b_2`), keeping only
    `inputs` for the backward pass.

    The gradient recomputes the pre-activation `inputs W_1 + b_1` from the
    inputs instead of keeping it. The recomputation reads the upstream
    gradient (a `0 *` term), so that XLA's scheduler cannot hoist it into the
    forward pass, where it would be one more saved `[N, F]` tensor per layer
    (an XLA optimization barrier does not help on CPU: its pipeline removes
    barriers before fusion); a non-finite upstream gradient, whose gradients
    are non-finite anyway, makes the weights' gradients all NaN.

    Args:
        inputs: `[N, D]`.
        kernel_1: `[D, F]`, `W_1`, in the inputs' dtype.
        bias_1: `[F]`, `b_1`.
        kernel_2: `[F, D]`, `W_2`.

    Returns:
        `[N, D]`.
    """

    @ops.custom_gradient
    def feed_forward(x, kernel_1, bias_1, kernel_2):
        outputs = ops.matmul(ops.relu(ops.matmul(x, kernel_1) + bias_1), kernel_2)

        def grad(*upstream):
            # TensorFlow passes one upstream gradient per output, JAX a tuple.
            upstream = tree.flatten(upstream)[0]
            zero = ops.sum(upstream[:1, :1]) * 0
            # [N, D] x [D, F] -> [N, F], recomputed
            pre_activation = ops.matmul(x, kernel_1) + (bias_1 + zero)
            active = pre_activation > 0
            activation = ops.where(active, pre_activation, 0)
            # [N, F]^T x [N, D] -> [F, D]; [N, D] x [F, D]^T -> [N, F]. Einsum
            # contracts in place: no transposed copies in graph mode.
            kernel_2_grad = ops.einsum("nf,nd->fd", activation, upstream)
            pre_activation_grad = ops.where(
                active, ops.einsum("nd,fd->nf", upstream, kernel_2), 0
            )
            # [N, D]^T x [N, F] -> [D, F]; [N, F] x [D, F]^T -> [N, D]
            kernel_1_grad = ops.einsum("nd,nf->df", x, pre_activation_grad)
            bias_1_grad = ops.sum(pre_activation_grad, axis=0)
            inputs_grad = ops.einsum("nf,df->nd", pre_activation_grad, kernel_1)
            return inputs_grad, kernel_1_grad, bias_1_grad, kernel_2_grad

        return outputs, grad

    return feed_forward(inputs, kernel_1, bias_1, kernel_2)
