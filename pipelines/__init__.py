"""Input pipelines: parallel text sources, subword tokenizers and tf.data batching.

Imports TensorFlow, tensorflow-text, tensorflow-datasets and sentencepiece only,
nothing else of this project (shared/DESIGN.md). So far it holds the bundled
corpora under `data/` (rebuilt by `scripts/build_corpora.py`).
"""
