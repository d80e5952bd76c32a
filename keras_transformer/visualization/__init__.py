"""Attention pictures like the paper's Figures 3-5.

- `attention_weights`: the attention probabilities of every layer of a
  `Transformer` (encoder self-attention, decoder self-attention,
  encoder-decoder attention) as numpy, from the model's own layers and masks.
- `plot_attention`: one heatmap panel per head, tokens on the axes, written
  as a PNG (matplotlib, the optional `plot` extra).
- `render_attention`: the two together for one sentence pair, one layer and
  a choice of heads; what the command line calls.

Needs matplotlib for drawing only: `pip install "keras-transformer[plot]"`.
"""

from keras_transformer.visualization.attention_heatmap import plot_attention
from keras_transformer.visualization.attention_weights import (
    ATTENTION_KINDS,
    attention_weights,
)
from keras_transformer.visualization.render_attention import render_attention

__all__ = [
    "ATTENTION_KINDS",
    "attention_weights",
    "plot_attention",
    "render_attention",
]
