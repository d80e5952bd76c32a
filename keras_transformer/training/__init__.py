"""Training: the paper's schedule, loss and metrics (§5.3, §5.4), compiling,
distribution strategies and checkpoints. TensorFlow is imported only where a
helper needs `tf.distribute`."""

from keras_transformer.training.compile_transformer import compile_transformer
from keras_transformer.training.distribution import STRATEGIES, make_strategy
from keras_transformer.training.label_smoothed_cross_entropy import (
    LabelSmoothedCrossEntropy,
)
from keras_transformer.training.masked_token_accuracy import MaskedTokenAccuracy
from keras_transformer.training.perplexity import Perplexity
from keras_transformer.training.transformer_schedule import TransformerSchedule

__all__ = [
    "STRATEGIES",
    "LabelSmoothedCrossEntropy",
    "MaskedTokenAccuracy",
    "Perplexity",
    "TransformerSchedule",
    "compile_transformer",
    "make_strategy",
]
