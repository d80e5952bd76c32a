"""Learned positional embedding (paper §3.5, Table 3 row E)."""

import keras
from keras import ops

from keras_transformer.validation import check_positive_int


@keras.saving.register_keras_serializable(package="keras_transformer")
class LearnedPositionEmbedding(keras.layers.Layer):
    """A trained embedding per position, the alternative of Table 3 row (E).

    The paper "replace[s] our sinusoidal positional encoding with learned
    positional embeddings [9]" and finds nearly identical results. Like
    `SinusoidalPositionEncoding`, the layer returns the embedding broadcast to
    the shape of `inputs`, for the caller to add. Unlike it, positions at or
    beyond `sequence_length` have no embedding.

    Args:
        sequence_length: int. The number of positions with an embedding.
        initializer: initializer of the `[sequence_length, D]` table. Defaults
            to `"glorot_uniform"`.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: tensor `[B, T, D]` (only its shape is used).
        start_index: int or scalar int tensor. Position of the first element,
            for incremental decoding. Defaults to `0`.

    Returns:
        A tensor `[B, T, D]`.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §3.5 and Table 3 row (E).
        - [Gehring et al., 2017. Convolutional Sequence to Sequence Learning](
          https://arxiv.org/abs/1705.03122) (the paper's [9]).

    Examples:
        >>> pe = LearnedPositionEmbedding(sequence_length=16)
        >>> pe(keras.ops.zeros((1, 5, 8))).shape
        (1, 5, 8)
    """

    def __init__(self, sequence_length, initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        check_positive_int("sequence_length", sequence_length)
        self.sequence_length = sequence_length
        self.initializer = keras.initializers.get(initializer)

    def build(self, inputs_shape):
        self.position_embeddings = self.add_weight(
            name="embeddings",
            shape=(self.sequence_length, inputs_shape[-1]),
            initializer=self.initializer,
        )
        self.built = True

    def call(self, inputs, start_index=0):
        shape = ops.shape(inputs)
        positions = ops.arange(shape[-2]) + start_index
        # [T] -> [T, D] -> [B, T, D]
        embeddings = ops.take(self.position_embeddings, positions, axis=0)
        return ops.broadcast_to(ops.cast(embeddings, self.compute_dtype), shape)

    def compute_output_shape(self, inputs_shape):
        return inputs_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "sequence_length": self.sequence_length,
                "initializer": keras.initializers.serialize(self.initializer),
            }
        )
        return config
