"""Helpers shared by the layers: initializer cloning, head sizes, sizes of
tensors and projections as 2-D matmuls.

Argument checks live in `keras_transformer.validation`."""

import math

import keras
from keras import ops


def clone_initializer(initializer):
    """A fresh copy, so two sublayers never draw the same initial values."""
    return initializer.__class__.from_config(initializer.get_config())


def head_dims(hidden_dim, num_heads, key_dim=None, value_dim=None):
    """Returns (d_k, d_v), deriving either as d_model / h when not given (§3.2.2)."""
    if (key_dim is None or value_dim is None) and hidden_dim % num_heads:
        raise ValueError(
            "d_model must be divisible by num_heads when key_dim or value_dim is "
            f"derived from it. Received: d_model={hidden_dim}, num_heads={num_heads}"
        )
    derived = hidden_dim // num_heads
    return (key_dim or derived), (value_dim or derived)


def static_or_dynamic_dims(x, axes):
    """The sizes of `x` along `axes`: Python ints where the size is known
    while tracing, scalar tensors (from one `keras.ops.shape`) where not.

    `keras.ops.shape` on TensorFlow makes a `Shape` op and, for every axis of
    unknown size, a slice with three constants, used or not; a decoding
    step's graph made dozens per layer, which tracing, Grappler and loading
    an export each pay for (BUILD_NOTES.md, "Beam search and the cache").
    Here nothing is made for an axis whose size is known, nor for one not
    asked for.
    """
    static = tuple(x.shape)
    if all(static[axis] is not None for axis in axes):
        return tuple(static[axis] for axis in axes)
    dynamic = ops.shape(x)
    return tuple(
        dynamic[axis] if static[axis] is None else static[axis] for axis in axes
    )


def project(dense, inputs, contracted_dims):
    """Applies a projection layer's kernel (and bias) as one 2-D matmul.

    `dense` is a `keras.layers.Dense` (`contracted_dims=1`) or one of
    `keras.layers.MultiHeadAttention`'s `EinsumDense` projections, which
    contract the last `contracted_dims` axes of `inputs` with the first ones
    of the kernel (`[D] x [D, H, d] -> [H, d]` for queries, keys and values;
    `[H, d_v] x [H, d_v, D] -> [D]` for the output). Keras' TensorFlow backend
    runs those as broadcast 3-D x 2-D matmuls or `tensordot`s; flattening to
    `[B*T, D] x [D, H*d]` gives the same numbers faster on CPU (one large
    matmul instead of a batch of small ones; figures in
    docs/experiment-log.md, "Attention projections as 2-D matmuls") and with
    fewer ops in the graph, with the same weights. Quantized or LoRA layers,
    and a layer with an activation, keep the layer's own call.
    """
    if (
        getattr(dense, "quantization_mode", None)
        or getattr(dense, "lora_enabled", False)
        or getattr(dense, "activation", None) not in (None, keras.activations.linear)
    ):
        return dense(inputs)
    kernel = dense.kernel
    input_size = math.prod(kernel.shape[:contracted_dims])
    output_shape = tuple(kernel.shape[contracted_dims:])
    if len(kernel.shape) != 2:
        kernel = ops.reshape(kernel, (input_size, math.prod(output_shape)))
    # The leading axes [B, T]: the first inferred by the reshape where the
    # others are known and not empty (a decoding step's T = 1), else all
    # from the run-time shape (-1 cannot be inferred for an empty tensor).
    rest = inputs.shape[1 : len(inputs.shape) - contracted_dims]
    if all(size for size in rest):
        leading = (-1, *rest)
    else:
        leading = static_or_dynamic_dims(
            inputs, range(len(inputs.shape) - contracted_dims)
        )
    # [B, T, *in] -> [B*T, prod(in)] x [prod(in), prod(out)] -> [B, T, *out]
    flat = inputs if len(inputs.shape) == 2 else ops.reshape(inputs, (-1, input_size))
    outputs = ops.matmul(flat, kernel)
    if dense.bias is not None:
        bias = dense.bias
        outputs = outputs + (bias if len(bias.shape) == 1 else ops.reshape(bias, (-1,)))
    if len(leading) == 1 and len(output_shape) == 1:
        return outputs
    return ops.reshape(outputs, (*leading, *output_shape))
