"""A learned attention bias by word distance (parsing, §6.3; not in the paper)."""

import keras
from keras import ops

from keras_transformer.validation import check_positive_int


@keras.saving.register_keras_serializable(package="keras_transformer")
class WordDistanceBias(keras.layers.Layer):
    """A scalar per head and word distance, added to attention scores.

    Attention over a subword source sees positions in pieces, while a
    parser's decisions are about words: the word before, the next one, the
    words ahead. This layer gives each head a learned bias for the distance
    d = (key's word) - (query's word), clipped to [-W, W], and one more for
    a query or key in no word (bos, eos, padding): `2W + 2` scalars per head,
    the bucketed relative positions of Shaw et al. (2018) and T5, counted in
    words. Its table starts at zero, which leaves attention as it was.
    `NextWordPointer` uses one for the decoder's cross-attention (queries:
    the next word to cover) and `Transformer` one for the encoder's
    self-attention (queries: each piece's own word); `CachedMultiHeadAttention`
    adds the result to its scaled scores (`attention_bias`).

    Args:
        window: int W >= 1, the largest distance told apart.
        num_heads: int, the attention heads.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Call arguments:
        query_words: int tensor `[B, Q]`, each query's word number (-1: no
            word).
        key_words: int tensor `[B, S]`, each key's word number (-1: no word).

    Returns:
        A tensor `[B, num_heads, Q, S]`.

    References:
        - [Shaw et al., 2018. Self-Attention with Relative Position Representations](
          https://aclanthology.org/N18-2074/).
        - [Raffel et al., 2020. Exploring the Limits of Transfer Learning with a Unified
          Text-to-Text Transformer](https://arxiv.org/abs/1910.10683) (bucketed relative
          position biases).

    Examples:
        >>> bias = WordDistanceBias(window=2, num_heads=3)
        >>> words = keras.ops.convert_to_tensor([[0, 0, 1, -1]])
        >>> bias(words, words).shape
        (1, 3, 4, 4)
    """

    def __init__(self, window, num_heads, **kwargs):
        super().__init__(**kwargs)
        check_positive_int("window", window)
        check_positive_int("num_heads", num_heads)
        self.window = window
        self.num_heads = num_heads

    def build(self, query_words_shape=None, key_words_shape=None):
        # [2W + 2, H]: distances -W..W, then "no word"
        self.table = self.add_weight(
            name="table",
            shape=(2 * self.window + 2, self.num_heads),
            initializer="zeros",
        )
        self.built = True

    def call(self, query_words, key_words):
        query_words = ops.cast(query_words, "int32")
        key_words = ops.cast(key_words, "int32")
        # [B, 1, S] - [B, Q, 1] -> [B, Q, S], clipped, as table rows
        distance = ops.expand_dims(key_words, 1) - ops.expand_dims(query_words, -1)
        bucket = ops.clip(distance, -self.window, self.window) + self.window
        in_words = ops.logical_and(
            ops.expand_dims(key_words >= 0, 1), ops.expand_dims(query_words >= 0, -1)
        )
        bucket = ops.where(in_words, bucket, 2 * self.window + 1)
        # [B, Q, S, H] -> [B, H, Q, S]
        return ops.transpose(ops.take(self.table, bucket, axis=0), (0, 3, 1, 2))

    def compute_output_shape(self, query_words_shape, key_words_shape):
        return (
            query_words_shape[0],
            self.num_heads,
            query_words_shape[1],
            key_words_shape[1],
        )

    def get_config(self):
        config = super().get_config()
        config.update({"window": self.window, "num_heads": self.num_heads})
        return config
