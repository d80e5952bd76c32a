"""Decoding: search functions over a model-agnostic `symbols_to_logits_fn`, and
the glue that drives a `Transformer`'s cached decoder with them."""

from keras_transformer.decoding.greedy_search import greedy_search
from keras_transformer.decoding.translate import greedy_translate

__all__ = ["greedy_search", "greedy_translate"]
