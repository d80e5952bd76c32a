"""Decoding: search functions over a model-agnostic `symbols_to_logits_fn`
(beam search with the GNMT length penalty, greedy, sampling), and the glue that
drives a `Transformer`'s cached decoder with them (paper §6.1), configured by
one `DecodingConfig`.

Every search runs on fixed-size buffers inside `keras.ops.while_loop`, so it
traces into a `tf.function`, compiles with XLA and runs under `jax.jit`.
"""

from keras_transformer.decoding.beam_search import beam_search
from keras_transformer.decoding.beam_utils import gather_beams, tile_beams
from keras_transformer.decoding.compiled_translate import compiled_translate
from keras_transformer.decoding.decoding_config import DecodingConfig
from keras_transformer.decoding.greedy_search import greedy_search
from keras_transformer.decoding.length_penalty import length_penalty
from keras_transformer.decoding.sampling_search import sampling_search
from keras_transformer.decoding.translate import output_lengths, translate

__all__ = [
    "DecodingConfig",
    "beam_search",
    "compiled_translate",
    "gather_beams",
    "greedy_search",
    "length_penalty",
    "output_lengths",
    "sampling_search",
    "tile_beams",
    "translate",
]
