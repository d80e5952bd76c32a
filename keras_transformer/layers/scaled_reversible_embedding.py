"""Token embedding shared with the pre-softmax projection (paper §3.4)."""

import copy

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_transformer")
class ScaledReversibleEmbedding(keras.layers.ReversibleEmbedding):
    """`keras.layers.ReversibleEmbedding` whose lookups are scaled by sqrt(d_model).

    Paper §3.4: "we share the same weight matrix between the two embedding
    layers and the pre-softmax linear transformation [...]. In the embedding
    layers, we multiply those weights by sqrt(d_model)." The lookup
    (`reverse=False`) returns `E[ids] * sqrt(d_model)`; the reverse call is the
    unscaled pre-softmax projection `x E^T` (with `tie_weights=False`, a separate
    matrix). The default initializer is N(0, d_model^-0.5), tensor2tensor's
    choice, so that the scaled embeddings start with unit variance like the
    sinusoids they are added to (the paper does not state an initializer).

    Two options, off by default, are for models trained elsewhere (Marian's,
    BUILD_NOTES "Deviations from the paper"): `scale=False` looks up without
    the sqrt(d_model) factor, and `output_bias=True` adds a learned bias `b`
    (zeros at first) to the projection: `x E^T + b`, Marian's
    `final_logits_bias`.

    Args:
        input_dim: int. The vocabulary size V.
        output_dim: int. The model size d_model.
        embeddings_initializer: initializer. Defaults to
            `RandomNormal(stddev=output_dim**-0.5)`.
        scale: bool. Multiply lookups by sqrt(d_model). Defaults to `True`.
        output_bias: bool. A bias on the reverse call. Defaults to `False`.
        **kwargs: every other argument of `keras.layers.ReversibleEmbedding`
            (`tie_weights`, `reverse_dtype`, ...).

    Call arguments:
        inputs: int tensor `[B, T]`, or a float tensor `[B, T, D]` when
            `reverse=True`.
        reverse: bool. Project to vocabulary logits instead of looking up.

    Returns:
        `[B, T, D]` embeddings, or `[B, T, V]` logits when `reverse=True`.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §3.4.
        - [Press & Wolf, 2017. Using the Output Embedding to Improve Language Models](
          https://arxiv.org/abs/1608.05859) (the paper's [30], the shared weights).

    Examples:
        >>> embedding = ScaledReversibleEmbedding(input_dim=10, output_dim=4)
        >>> embedding(keras.ops.ones((2, 3), "int32")).shape
        (2, 3, 4)
    """

    def __init__(
        self,
        input_dim,
        output_dim,
        embeddings_initializer=None,
        scale=True,
        output_bias=False,
        **kwargs,
    ):
        if embeddings_initializer is None:
            embeddings_initializer = keras.initializers.RandomNormal(
                stddev=output_dim**-0.5
            )
        super().__init__(
            input_dim,
            output_dim,
            embeddings_initializer=embeddings_initializer,
            **kwargs,
        )
        self.scale = bool(scale)
        self.output_bias = bool(output_bias)

    def build(self, inputs_shape=None):
        super().build(inputs_shape)
        if self.output_bias:
            # [V], added to the logits of the reverse call
            self.reverse_bias = self.add_weight(
                shape=(self.input_dim,), initializer="zeros", name="reverse_bias"
            )

    def output_kernel(self):
        """The reverse call's matrix in the embedding's `[V, D]` layout.

        `E` itself with tied weights (logits are `x E^T`), else the separate
        reverse embedding transposed; in the compute dtype. What a loss that
        fuses the projection with the softmax multiplies by (see
        `chunked_softmax_cross_entropy`).
        """
        if self.logit_soft_cap is not None or self.output_bias:
            raise ValueError(
                "A fused projection computes plain logits x E^T. Received: "
                f"logit_soft_cap={self.logit_soft_cap}, "
                f"output_bias={self.output_bias}"
            )
        kernel = (
            self.embeddings
            if self.tie_weights
            else ops.transpose(self.reverse_embeddings)
        )
        return ops.cast(kernel, self.reverse_dtype or self.compute_dtype)

    @property
    def variable_serialization_spec(self):
        # Keras saves and loads the variables this spec names, in order.
        spec = copy.deepcopy(super().variable_serialization_spec)
        if self.output_bias:
            for names in spec.values():
                names.append("reverse_bias")
        return spec

    def call(self, inputs, reverse=False):
        outputs = super().call(inputs, reverse=reverse)
        if reverse:
            if self.output_bias:
                outputs = outputs + ops.cast(self.reverse_bias, outputs.dtype)
            return outputs
        if not self.scale:
            return outputs
        return outputs * ops.cast(ops.sqrt(float(self.output_dim)), outputs.dtype)

    def get_config(self):
        config = super().get_config()
        config.update({"scale": self.scale, "output_bias": self.output_bias})
        return config
