"""Exported models: checkpoint averaging, the SavedModel translator, serving.

May import `keras_transformer`, `pipelines` and TensorFlow.
"""

from savedmodels.average_checkpoints import average_checkpoints
from savedmodels.export import export_translator
from savedmodels.op_compatibility import check_serving_ops
from savedmodels.serving_client import ServingClient, ServingError
from savedmodels.serving_config import serving_config
from savedmodels.translator_module import TranslatorModule

__all__ = [
    "ServingClient",
    "ServingError",
    "TranslatorModule",
    "average_checkpoints",
    "check_serving_ops",
    "export_translator",
    "serving_config",
]
