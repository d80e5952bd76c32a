"""Pictures: attention like the paper's Figures 3-5, and learning curves.

- `attention_weights`: the attention probabilities of every layer of a
  `Transformer` (encoder self-attention, decoder self-attention,
  encoder-decoder attention) as numpy, from the model's own layers and masks.
- `plot_attention`: one heatmap panel per head, tokens on the axes, written
  as a PNG (matplotlib).
- `render_attention`: the two together for one sentence pair, one layer and
  a choice of heads; what the command line calls.
- `plot_learning_curve`: training loss and dev BLEU against updates and
  minutes (a `LearningCurveLog` file), as a PNG.

matplotlib (a dependency) is imported on the first drawing only.
"""

from keras_transformer.visualization.attention_heatmap import plot_attention
from keras_transformer.visualization.attention_weights import (
    ATTENTION_KINDS,
    attention_weights,
)
from keras_transformer.visualization.learning_curve import plot_learning_curve
from keras_transformer.visualization.render_attention import render_attention

__all__ = [
    "ATTENTION_KINDS",
    "attention_weights",
    "plot_attention",
    "plot_learning_curve",
    "render_attention",
]
