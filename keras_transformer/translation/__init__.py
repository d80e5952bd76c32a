"""Translation with a trained run or its export: `Translator` (strings in,
translations out), the line streaming it shares with `Parser`, the
evaluation of a translation run (sacreBLEU) and its attention pictures.

Application layer: may import the core, `runs`, `pipelines` and
`savedmodels`."""

from keras_transformer.lazy_exports import lazy_exports

_LAZY = {
    "Translator": "keras_transformer.translation.translator",
    "translator_arguments": "keras_transformer.translation.translator",
    "score_translations": "keras_transformer.translation.translation_evaluation",
    "attention": "keras_transformer.translation.attention_plot",
}

__all__ = ["Translator", "attention", "score_translations", "translator_arguments"]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
