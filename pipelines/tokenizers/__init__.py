"""Tokenizers that run in the graph: SentencePiece and WordPiece subwords, the
parser's whole-symbol vocabulary, their one-file artefact and registry, the
special ids, and `encode_sources` (a source line as the model reads it).
"""
