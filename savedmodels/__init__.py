"""Exported models: checkpoint averaging, the SavedModel translator, serving.

May import `keras_transformer`, `pipelines` and TensorFlow.
"""

from savedmodels.average_checkpoints import average_checkpoints
from savedmodels.export import export_translator
from savedmodels.translator_module import TranslatorModule

__all__ = ["TranslatorModule", "average_checkpoints", "export_translator"]
