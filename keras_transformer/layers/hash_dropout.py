"""Dropout whose mask is a keyed integer hash of each element's position."""

import keras
from keras import ops, tree

# lowbias32's multipliers (C. Wellons, "Prospecting for hash functions", 2018):
# a 32-bit integer hash with near-ideal avalanche (every input bit flips every
# output bit with probability ~1/2).
_MULTIPLIER_1 = 0x7FEB352D
_MULTIPLIER_2 = 0x846CA68B
# 2^32 / golden ratio, to decorrelate the two halves of the seed.
_GOLDEN = 0x9E3779B9


def _uint32(value):
    return ops.convert_to_tensor(value, dtype="uint32")


def hash32(x):
    """lowbias32 on a `uint32` tensor, element-wise (wraps modulo 2^32)."""
    x = ops.bitwise_xor(x, ops.right_shift(x, _uint32(16)))
    x = ops.multiply(x, _uint32(_MULTIPLIER_1))
    x = ops.bitwise_xor(x, ops.right_shift(x, _uint32(15)))
    x = ops.multiply(x, _uint32(_MULTIPLIER_2))
    return ops.bitwise_xor(x, ops.right_shift(x, _uint32(16)))


def hash_bits(shape, seed):
    """32 pseudo-random bits per element of `shape`, a function of (seed, position).

    Two keyed rounds of `hash32` over the element's row-major position i:
    `hash32(hash32(i ^ k0) + k1)`, the keys `k0, k1` hashed from the two seed
    words. One round with the seed as an offset would make the masks of two
    nearby seeds shifted copies of each other; the second keyed round removes
    that structure.

    Args:
        shape: tuple of ints (or scalar int tensors).
        seed: int tensor `[2]`, e.g. a `keras.random.SeedGenerator`'s `next()`.

    Returns:
        A `uint32` tensor of `shape`.
    """
    # int64 (TensorFlow) or uint32 (JAX) seed state; integer casts wrap.
    seed = ops.cast(seed, "uint32")
    key_0 = hash32(seed[0])
    key_1 = hash32(ops.bitwise_xor(seed[1], _uint32(_GOLDEN)) + key_0)
    size = 1
    for dim in shape:
        size = size * dim
    # [prod(shape)] -> shape, each element's row-major position
    position = ops.reshape(ops.cast(ops.arange(size, dtype="int32"), "uint32"), shape)
    return hash32(ops.add(hash32(ops.bitwise_xor(position, key_0)), key_1))


@keras.saving.register_keras_serializable(package="keras_transformer")
class HashDropout(keras.layers.Dropout):
    """`keras.layers.Dropout` with a mask from a keyed position hash (paper §5.4).

    The paper's regularisation: "We apply dropout to the output of each
    sub-layer ... In addition, we apply dropout to the sums of the embeddings
    and the positional encodings." This layer drops the same way as
    `keras.layers.Dropout` (each element is zeroed with probability `rate`,
    the others scaled by `1 / (1 - rate)`; inactive outside training), with the
    same arguments and seed handling (a `keras.random.SeedGenerator` that
    advances once per call, so masks differ across steps and a checkpointed
    generator resumes the same sequence). Only the source of the random bits
    differs: `hash_bits`, two rounds of an integer hash of each element's
    position keyed by the seed, instead of TensorFlow's stateless Philox
    kernel.

    Why: under XLA on CPU, TensorFlow's stateless random kernels behind
    Keras' dropout took a sizeable share of the small config's training step
    (17 dropout sites), and the step ran faster with this mask than with
    Keras' (figures in docs/experiment-log.md, "Dropout masks from a
    position hash"). The hash is a dozen integer element-wise ops that XLA fuses into
    the masking itself. Integer arithmetic is exact, so the masks are
    bit-identical on every backend and device for the same seed.

    The keep test compares 32 bits against `round(rate * 2^32)`, so the drop
    probability is `rate` to within 2^-32.

    Args:
        rate: float in `[0, 1)`. Fraction of the inputs to drop.
        noise_shape: optional tuple. As `keras.layers.Dropout`: the mask's
            shape, broadcast over the inputs (`None` entries take the input's
            size).
        seed: optional int. Seed of the layer's `SeedGenerator`.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        inputs: tensor of any shape.
        training: bool. Drop only when `True`.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §5.4.
        - [Srivastava et al., 2014. Dropout: A Simple Way to Prevent Neural Networks
          from Overfitting](https://jmlr.org/papers/v15/srivastava14a.html).

    Examples:
        >>> layer = HashDropout(0.5, seed=1)
        >>> x = keras.ops.ones((2, 4))
        >>> y = layer(x, training=True)  # entries 0.0 or 2.0
        >>> bool(keras.ops.all((y == 0.0) | (y == 2.0)))
        True
    """

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        if self.rate >= 1:
            return ops.zeros_like(inputs)
        shape = ops.shape(inputs)
        if self.noise_shape is not None:
            shape = tuple(
                size if dim is None else dim
                for dim, size in zip(self.noise_shape, shape, strict=True)
            )
        bits = hash_bits(shape, self.seed_generator.next())
        # Drop where the bits fall below rate * 2^32.
        threshold = min(round(self.rate * 2**32), 2**32 - 1)
        keep = ops.greater_equal(bits, _uint32(threshold))
        return scale_kept(inputs, keep, 1.0 / (1.0 - self.rate))


def scale_kept(inputs, keep, factor):
    """`inputs * factor` where `keep`, else 0, keeping only `keep` for backward.

    The gradient is the same masking of the upstream gradient, so the backward
    pass needs the boolean mask alone: 1 byte per element. Autodiff of
    `inputs * scale` keeps the float `scale` (4 bytes per element, 32 dropout
    sites in the `base` training step); of `where(keep, inputs * scale, 0)`,
    XLA kept more still (a higher peak memory of the `base` step; figures in
    docs/experiment-log.md, "Dropout masks from a position hash").

    Args:
        inputs: float tensor.
        keep: bool tensor, broadcastable to the inputs.
        factor: float. The scale of kept elements, `1 / (1 - rate)`.

    Returns:
        A tensor of the inputs' shape and dtype.
    """

    @ops.custom_gradient
    def apply(x, keep):
        scale = ops.cast(factor, x.dtype)
        outputs = ops.where(keep, x * scale, ops.zeros_like(scale))

        def grad(*upstream):
            # TensorFlow passes one upstream gradient per output, JAX a tuple.
            upstream = tree.flatten(upstream)[0]
            inputs_grad = ops.where(keep, upstream * scale, ops.zeros_like(scale))
            return inputs_grad, None

        return outputs, grad

    return apply(inputs, keep)
