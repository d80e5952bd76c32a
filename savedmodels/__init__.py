"""Exported models: checkpoint averaging, the SavedModel translator, serving.

May import `keras_transformer`, `pipelines` and TensorFlow.
"""

from savedmodels.average_checkpoints import average_checkpoints

__all__ = ["average_checkpoints"]
