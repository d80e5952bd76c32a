"""The exported translator's search, apart from its module: the buffer a
request decodes in, the request's checks in the graph, and the traced
searches, one per beam size (`TranslatorModule`)."""

import dataclasses

import tensorflow as tf

from keras_transformer.decoding.bracket_constraint import one_beam_as_greedy
from keras_transformer.decoding.translate import translate
from pipelines.tokenizers.special_tokens import BOS_ID, EOS_ID

# Decoding buffers are multiples of this many positions
# (`decoding_buffer_length`).
BUFFER_STEP = 16


def decoding_buffer_length(source_length, max_extra_length, max_buffer_length):
    """The decoding buffer of a request whose longest source has
    `source_length` positions: `source_length + max_extra_length` rounded up
    to a multiple of `BUFFER_STEP`, at least 1 (an empty batch) and at most
    `max_buffer_length`. Python ints or scalar int32 tensors."""
    step = BUFFER_STEP
    rounded = (source_length + max_extra_length + step - 1) // step * step
    if isinstance(rounded, int):
        return min(max(rounded, 1), max_buffer_length)
    return tf.clip_by_value(rounded, 1, max_buffer_length)


def beam_signature(name, beam_size):
    """The name of the signature that runs signature `name`'s search at one
    beam size: `translate_beam_4`, `parse_beam_1`."""
    return f"{name}_beam_{beam_size}"


def reduce_max_or_zero(x):
    """The largest element of `x`, 0 when `x` is empty (a batch of 0)."""
    return tf.reduce_max(tf.concat([tf.reshape(x, [-1]), [0]], axis=0))


def check_request(beam_size, alpha, max_extra_length, n_best, max_beam_size, limit):
    """Graph assertions on the per-request parameters (InvalidArgument); a
    Python int `beam_size` (a search of one beam size, checked when it was
    traced) is not checked again."""
    # (value, bound, message)
    at_least = [
        (n_best, 1, "n_best must be >= 1"),
        (alpha, 0.0, "alpha must be >= 0"),
        (max_extra_length, 0, "max_extra_length must be >= 0"),
    ]
    at_most = [
        (n_best, beam_size, "n_best must be <= beam_size"),
        (
            max_extra_length,
            limit,
            f"max_extra_length must be <= max_extra_length_limit={limit}",
        ),
    ]
    if not isinstance(beam_size, int):
        at_least.append((beam_size, 1, "beam_size must be >= 1"))
        at_most.append(
            (
                beam_size,
                max_beam_size,
                f"beam_size must be <= max_beam_size={max_beam_size}",
            )
        )
    return [
        *(tf.debugging.assert_greater_equal(v, b, message=m) for v, b, m in at_least),
        *(tf.debugging.assert_less_equal(v, b, message=m) for v, b, m in at_most),
        tf.debugging.assert_all_finite(alpha, message="alpha must be finite"),
    ]


def make_search(model, decoding, max_beam_size, constraint=None):
    """`{K: fn(source_ids, alpha, max_extra_length, buffer_length, word_counts)
    -> (ids [B, K_max, T], scores [B, K_max])}`, Python `translate` with
    `decoding` at beam size K (and `constraint`, over `word_counts`) on a
    buffer of `buffer_length` (a scalar tensor) positions, padded to
    `max_beam_size` hypotheses (score -inf) so that every K has one shape.
    A parser's K = 1 is greedy search (`one_beam_as_greedy`).

    Each is a `tf.function`, traced once (per kind of `word_counts`, a
    tensor or `None`) and stored once in a SavedModel, however many
    signatures call it: the `translate` signature's beam-size switch and the
    signature of its own beam size (`TranslatorModule.translate_with_beam`),
    whose graph then holds this one search."""

    def search(beam_size):
        def fn(source_ids, alpha, max_extra_length, buffer_length, word_counts):
            if not isinstance(alpha, float):
                # Checked in the graph by `check_request`.
                alpha = tf.cast(alpha, tf.float32)
            config = dataclasses.replace(
                decoding,
                beam_size=beam_size,
                alpha=alpha,
                max_extra_length=max_extra_length,
                n_best=1,
            )
            config = one_beam_as_greedy(config)
            ids, scores = translate(
                model,
                source_ids,
                config,
                bos_id=BOS_ID,
                eos_id=EOS_ID,
                max_length=tf.cast(buffer_length, tf.int32),
                constraint=constraint,
                word_counts=word_counts,
            )
            missing = max_beam_size - beam_size
            ids = tf.pad(ids, [[0, 0], [0, missing], [0, 0]])
            scores = tf.pad(
                scores, [[0, 0], [0, missing]], constant_values=float("-inf")
            )
            return ids, scores

        return fn

    return {
        k: tf.function(search(k), autograph=False) for k in range(1, max_beam_size + 1)
    }
