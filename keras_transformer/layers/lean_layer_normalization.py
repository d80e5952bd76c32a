"""Layer normalization whose gradient keeps one tensor per call (paper §3.1)."""

import keras
from keras import ops, tree


@keras.saving.register_keras_serializable(package="keras_transformer")
class LeanLayerNormalization(keras.layers.LayerNormalization):
    """`keras.layers.LayerNormalization` with a gradient that keeps less memory.

    Paper §3.1: the output of each sub-layer is `LayerNorm(x + Sublayer(x))`
    (Ba et al., 2016): `y = (x - mean) / sqrt(var + eps) * gamma + beta` over
    the features. Same formula, same weights (`gamma`, `beta`) and the same
    arguments as the Keras layer; only the backward pass differs.

    Keras computes `x * inv + (beta - mean * inv)` with `inv = rsqrt(var +
    eps) * gamma` broadcast to the input's shape, and automatic
    differentiation keeps both `x` and that full-size `inv` until the backward
    pass. This layer normalizes over the last axis as one custom-gradient op
    (`normalize_last_axis`) that keeps only the normalized input and the
    per-row `1 / sqrt(var + eps)`: one `[B, T, D]` tensor per call instead of
    two, 30 calls in the `base` model's training step (BUILD_NOTES.md,
    "Training").

    Any other setting (several axes, `rms_scaling`, `center=False` or
    `scale=False`) runs Keras' own computation.

    Args:
        **kwargs: as `keras.layers.LayerNormalization` (`epsilon`, `dtype`,
            `name`, ...).

    Call arguments:
        inputs: tensor `[..., D]`.

    Returns:
        A tensor of the inputs' shape.

    References:
        - [Ba et al., 2016. Layer Normalization](https://arxiv.org/abs/1607.06450).
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §3.1.

    Examples:
        >>> norm = LeanLayerNormalization(epsilon=1e-6)
        >>> norm(keras.ops.ones((2, 3, 8))).shape
        (2, 3, 8)
    """

    def call(self, inputs):
        if not self._normalizes_last_axis(len(inputs.shape)):
            return super().call(inputs)
        compute_dtype = keras.backend.result_type(inputs.dtype, "float32")
        outputs = normalize_last_axis(
            ops.cast(inputs, compute_dtype),
            ops.cast(self.gamma, compute_dtype),
            ops.cast(self.beta, compute_dtype),
            self.epsilon,
        )
        return ops.cast(outputs, self.compute_dtype)

    def _normalizes_last_axis(self, rank):
        axes = self.axis if isinstance(self.axis, (list, tuple)) else [self.axis]
        return (
            len(axes) == 1
            and axes[0] in (-1, rank - 1)
            and self.center
            and self.scale
            and not getattr(self, "rms_scaling", False)
        )


def normalize_last_axis(inputs, gamma, beta, epsilon):
    """Layer normalization over the last axis, keeping one tensor for backward.

    `y = x_hat * gamma + beta` with `x_hat = (x - mean) * r` and `r = 1 /
    sqrt(var + eps)` per row (the biased variance, as Keras and the paper's
    reference implementation use). The gradient is the closed form

        dx = r * (g - mean(g) - x_hat * mean(g * x_hat)),  g = dy * gamma,

    with `dgamma = sum(dy * x_hat)` and `dbeta = sum(dy)` over every row. It
    reads `x_hat` and `r`, so those (one `[..., D]` tensor and one `[..., 1]`)
    are all the forward pass keeps.

    Args:
        inputs: float tensor `[..., D]`.
        gamma: float tensor `[D]`, in the inputs' dtype.
        beta: float tensor `[D]`, in the inputs' dtype.
        epsilon: float. Added to the variance.

    Returns:
        A tensor of the inputs' shape and dtype.
    """

    @ops.custom_gradient
    def normalize(x, gamma, beta):
        # [..., D] -> [..., 1]
        mean = ops.mean(x, axis=-1, keepdims=True)
        centered = x - mean
        inverse_std = ops.rsqrt(
            ops.mean(ops.square(centered), axis=-1, keepdims=True) + epsilon
        )
        normalized = centered * inverse_std
        outputs = normalized * gamma + beta

        def grad(*upstream):
            # TensorFlow passes one upstream gradient per output, JAX a tuple.
            upstream = tree.flatten(upstream)[0]
            # [..., D] -> [N, D] -> [D]; the size comes from gamma, so the
            # backward pass holds no reference to `x`.
            features = ops.shape(gamma)[0]
            rows_upstream = ops.reshape(upstream, (-1, features))
            rows_normalized = ops.reshape(normalized, (-1, features))
            gamma_grad = ops.sum(rows_upstream * rows_normalized, axis=0)
            beta_grad = ops.sum(rows_upstream, axis=0)
            scaled = upstream * gamma
            inputs_grad = inverse_std * (
                scaled
                - ops.mean(scaled, axis=-1, keepdims=True)
                - normalized * ops.mean(scaled * normalized, axis=-1, keepdims=True)
            )
            return inputs_grad, gamma_grad, beta_grad

        return outputs, grad

    return normalize(inputs, gamma, beta)
