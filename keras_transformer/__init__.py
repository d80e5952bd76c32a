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

Importing the package changes one thing in the process, an environment
default: `TF_ENABLE_ONEDNN_OPTS=1` unless the variable is set (TensorFlow's
oneDNN CPU kernels; it takes effect when the package is imported before
TensorFlow). Memory tuning is an explicit call,
`keras_transformer.process_defaults.tune_memory()`, which the command line
and the benchmarks make; see `process_defaults`.
"""

from keras_transformer import process_defaults

process_defaults.set_onednn_default()

from keras_transformer import layers  # noqa: E402
from keras_transformer.models import (  # noqa: E402
    PAD_ID,
    Transformer,
    build_transformer,
)
from keras_transformer.transformer_config import TransformerConfig  # noqa: E402

__version__ = "0.1.0"

__all__ = ["PAD_ID", "Transformer", "TransformerConfig", "build_transformer", "layers"]
