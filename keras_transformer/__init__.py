"""keras-transformer: the Transformer of "Attention Is All You Need" for Keras 3.

- `layers`: the paper's layers (attention with a cache, feed-forward, embeddings,
  positions, encoder and decoder blocks), usable in any Keras model.
- `models`: the functional encoder-decoder `Transformer` and `build_transformer`.
- `TransformerConfig`: the paper's hyperparameters and presets (base, big,
  Table 3 rows, parsing).
- `decoding`: beam, greedy and sampling search over a `symbols_to_logits_fn`,
  and `translate`, which drives a `Transformer`'s cached decoder with them.
- `evaluation`: sacreBLEU scoring of translations, a BLEU callback.
- `training`: the §5.3 schedule, the label-smoothed loss, metrics, strategies,
  resumable `fit` with checkpoints.
"""

from keras_transformer import layers
from keras_transformer.models import PAD_ID, Transformer, build_transformer
from keras_transformer.transformer_config import TransformerConfig

__version__ = "0.1.0"

__all__ = ["PAD_ID", "Transformer", "TransformerConfig", "build_transformer", "layers"]
