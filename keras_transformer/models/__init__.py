"""Models composed of the layers: the encoder-decoder Transformer and its builder."""

from keras_transformer.models.builder import build_transformer
from keras_transformer.models.special_ids import BOS_ID, EOS_ID, PAD_ID
from keras_transformer.models.transformer import Transformer

__all__ = ["BOS_ID", "EOS_ID", "PAD_ID", "Transformer", "build_transformer"]
