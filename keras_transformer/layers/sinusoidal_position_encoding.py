"""Sinusoidal positional encoding (paper §3.5)."""

import keras
from keras import ops

from keras_transformer.validation import check_one_of, check_positive_int

# Where the sines and cosines sit on the feature axis (see the class).
SINUSOID_LAYOUTS = ("interleaved", "halves")


@keras.saving.register_keras_serializable(package="keras_transformer")
class SinusoidalPositionEncoding(keras.layers.Layer):
    """The fixed positional encoding of paper §3.5.

        PE(pos, 2i)     = sin(pos / 10000^(2i / d_model))
        PE(pos, 2i + 1) = cos(pos / 10000^(2i / d_model))

    With `layout="interleaved"` (the default) sines and cosines are
    interleaved on the feature axis exactly as the formula reads; with
    `layout="halves"` all sines come first, then all cosines at the same
    frequencies: a permutation of the same features, the layout of Marian and
    of its Hugging Face port (`MarianSinusoidalPositionalEmbedding`), which
    imported models need (BUILD_NOTES, "Deviations from the paper"). The layer
    returns the encoding, broadcast to the shape of `inputs`; the caller adds
    it to the scaled token embeddings. It has no weights, so it extrapolates
    to any length.

    Args:
        max_wavelength: int. The base of the geometric progression of
            wavelengths, 10000 in the paper. Defaults to `10000`.
        layout: `"interleaved"` (default) or `"halves"`.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: tensor `[B, T, D]` (only its shape is used); D must be even.
        start_index: int or scalar int tensor. Position of the first element,
            for incremental decoding. Defaults to `0`.

    Returns:
        A tensor `[B, T, D]` in the layer's compute dtype.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §3.5.

    Examples:
        >>> pe = SinusoidalPositionEncoding()
        >>> pe(keras.ops.zeros((1, 5, 8))).shape
        (1, 5, 8)
    """

    def __init__(self, max_wavelength=10000, layout="interleaved", **kwargs):
        super().__init__(**kwargs)
        check_positive_int("max_wavelength", max_wavelength)
        check_one_of("layout", layout, SINUSOID_LAYOUTS)
        self.max_wavelength = max_wavelength
        self.layout = layout
        self.built = True

    def call(self, inputs, start_index=0):
        shape = ops.shape(inputs)
        length, hidden_dim = shape[-2], shape[-1]
        if hidden_dim % 2:
            raise ValueError(
                "SinusoidalPositionEncoding needs an even feature size. "
                f"Received: inputs.shape={inputs.shape}"
            )
        positions = ops.cast(ops.arange(length) + start_index, "float32")
        # 1 / 10000^(2i / d_model) for i in [0, d_model / 2)
        inverse_frequencies = ops.power(
            float(self.max_wavelength),
            -ops.arange(0, hidden_dim, 2, dtype="float32") / float(hidden_dim),
        )
        # [T, 1] * [1, D/2] -> [T, D/2]
        angles = ops.expand_dims(positions, 1) * ops.expand_dims(inverse_frequencies, 0)
        if self.layout == "halves":
            # [T, D/2] twice -> [T, D]: all sines, then all cosines
            encoding = ops.concatenate([ops.sin(angles), ops.cos(angles)], axis=-1)
        else:
            # [T, D/2, 2] -> [T, D]: sin at even features, cos at odd ones
            encoding = ops.reshape(
                ops.stack([ops.sin(angles), ops.cos(angles)], axis=-1),
                (length, hidden_dim),
            )
        return ops.broadcast_to(ops.cast(encoding, self.compute_dtype), shape)

    def compute_output_shape(self, inputs_shape):
        return inputs_shape

    def get_config(self):
        config = super().get_config()
        config.update({"max_wavelength": self.max_wavelength, "layout": self.layout})
        return config
