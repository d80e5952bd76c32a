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
- `Translator` and `Parser`: strings in, translations or trees out, from a
  trained run (`Translator.from_run(run_dir)`) or its export
  (`Translator.from_export(export_dir)`); `translation`, `parsing`.
- `workflows`: prepare, train, average, evaluate and export a recipe from
  Python, on the command line's run directories; `runs` (`load_run`, the
  run directory).

Importing the package changes one thing in the process, an environment
default: `TF_ENABLE_ONEDNN_OPTS=1` unless the variable is set (TensorFlow's
oneDNN CPU kernels; it takes effect when the package is imported before
TensorFlow, and the package warns when it comes too late). Its names
(`Transformer`, `layers`, ...) are imported on first use, so importing the
package alone does not import TensorFlow. Memory tuning is an explicit call,
`keras_transformer.process_defaults.tune_memory()`, which the command line and
the benchmarks make; see `process_defaults`.
"""

from keras_transformer import process_defaults
from keras_transformer.lazy_exports import lazy_exports

process_defaults.set_onednn_default()

__version__ = "0.1.0"

# Imported on first use (PEP 562), so that the command line can import
# TensorFlow quietly before anything else does (cli/startup.py).
_LAZY = {
    "PAD_ID": "keras_transformer.models",
    "Transformer": "keras_transformer.models",
    "build_transformer": "keras_transformer.models",
    "TransformerConfig": "keras_transformer.transformer_config",
    "Translator": "keras_transformer.translation.translator",
    "Parser": "keras_transformer.parsing.parser",
    "layers": None,
    "workflows": None,
    "runs": None,
}

__all__ = [
    "PAD_ID",
    "Parser",
    "Transformer",
    "TransformerConfig",
    "Translator",
    "build_transformer",
    "layers",
    "runs",
    "workflows",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
