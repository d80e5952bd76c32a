"""Exported models: checkpoint averaging, the SavedModel translator, serving.

May import `keras_transformer`, `pipelines` and TensorFlow. Empty until the
export issue lands.
"""
