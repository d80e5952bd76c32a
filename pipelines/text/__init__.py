"""Parallel text and the training input: the bundled corpora, local files and
TFDS, the tokenized cache, length bucketing under a token budget, and the
tf.data pipeline.
"""
