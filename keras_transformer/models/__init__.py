"""Models composed of the layers: the encoder-decoder Transformer and its builder."""

from keras_transformer.models.builder import build_transformer
from keras_transformer.models.transformer import BOS_ID, EOS_ID, PAD_ID, Transformer

__all__ = ["BOS_ID", "EOS_ID", "PAD_ID", "Transformer", "build_transformer"]
