"""Keras 3 layers of the Transformer (paper §3), and the parser's next-word
pointer (§6.3, not in the paper), usable in any Keras model.

Every layer uses `keras.ops` only (so it runs on every Keras backend), takes
plain arguments (never a config object) and is registered serializable.
"""

from keras_transformer.layers.attention_masks import (
    causal_attention_mask,
    key_padding_attention_mask,
    merge_attention_masks,
    padding_mask,
)
from keras_transformer.layers.cached_multi_head_attention import (
    CachedMultiHeadAttention,
)
from keras_transformer.layers.hash_dropout import HashDropout
from keras_transformer.layers.lean_layer_normalization import LeanLayerNormalization
from keras_transformer.layers.learned_position_embedding import (
    LearnedPositionEmbedding,
)
from keras_transformer.layers.next_word_pointer import NextWordPointer
from keras_transformer.layers.position_wise_feed_forward import (
    PositionWiseFeedForward,
)
from keras_transformer.layers.scaled_reversible_embedding import (
    ScaledReversibleEmbedding,
)
from keras_transformer.layers.sinusoidal_position_encoding import (
    SinusoidalPositionEncoding,
)
from keras_transformer.layers.transformer_decoder_block import TransformerDecoderBlock
from keras_transformer.layers.transformer_encoder_block import TransformerEncoderBlock
from keras_transformer.layers.word_distance_bias import WordDistanceBias

__all__ = [
    "CachedMultiHeadAttention",
    "HashDropout",
    "LeanLayerNormalization",
    "LearnedPositionEmbedding",
    "NextWordPointer",
    "PositionWiseFeedForward",
    "ScaledReversibleEmbedding",
    "SinusoidalPositionEncoding",
    "TransformerDecoderBlock",
    "TransformerEncoderBlock",
    "WordDistanceBias",
    "causal_attention_mask",
    "key_padding_attention_mask",
    "merge_attention_masks",
    "padding_mask",
]
