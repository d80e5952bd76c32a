import dataclasses

import numpy as np
import pytest
from keras import ops

from keras_transformer.decoding import (
    DecodingConfig,
    beam_search,
    compiled_translate,
    translate,
)
from keras_transformer.decoding.translate import output_lengths
from tests.keras_transformer.decoding.conftest import (
    BOS_ID,
    EOS_ID,
    VOCAB_SIZE,
    make_tiny_model,
)
from tests.markers import tensorflow_only


def _sources(batch_size=5, width=6, seed=7):
    rng = np.random.default_rng(seed)
    source = rng.integers(4, VOCAB_SIZE, (batch_size, width)).astype("int32")
    source[0, 3:] = 0  # a short, padded source in the batch
    return source


def _uncached_step(model, source, beam_size, max_length):
    """A step function that re-runs the full model on the whole prefix."""
    # [B, S] -> [B*K, S]
    tiled_source = ops.convert_to_tensor(np.repeat(source, beam_size, axis=0))

    def fn(ids, index, cache):
        prefix = ops.slice_update(cache, [0, index], ids)
        logits = model({"source_ids": tiled_source, "target_ids": prefix})
        # [B*K, T, V] -> [B*K, V], the logits at `index`; pad is never chosen
        logits = ops.take(logits, index, axis=1)
        return ops.where(ops.equal(ops.arange(VOCAB_SIZE), 0), -1e9, logits), prefix

    batch_size = source.shape[0]
    return fn, ops.zeros((batch_size, max_length), "int32")


def test_cached_greedy_equals_uncached_recomputation(tiny_model):
    source = _sources()
    max_length = 8
    # Every sentence's limit (source length + 50) is beyond the buffer: all
    # decode up to `max_length` tokens, as the recomputation below does.
    ids, _ = translate(
        tiny_model,
        source,
        DecodingConfig(method="greedy"),
        bos_id=BOS_ID,
        eos_id=EOS_ID,
        max_length=max_length,
    )
    cached = np.array(ids)[:, 0]

    # Second path: re-run the full model on the whole prefix at every step
    # (in a fixed-width buffer, zeros ahead: masked, and causally invisible).
    ids = np.zeros((len(source), max_length + 1), "int32")
    ids[:, 0] = BOS_ID
    finished = np.zeros(len(source), bool)
    for i in range(max_length):
        inputs = {"source_ids": source, "target_ids": ids[:, :max_length]}
        logits = np.array(tiny_model(inputs))[:, i]
        logits[:, 0] = -np.inf  # the glue never generates padding
        next_ids = np.where(finished, 0, logits.argmax(-1)).astype("int32")
        finished |= next_ids == EOS_ID
        ids[:, i + 1] = next_ids
    np.testing.assert_array_equal(cached, ids[:, 1:])
    assert len(set(map(tuple, cached))) > 1  # not a degenerate constant output


@pytest.mark.parametrize("share_beam_cache", [False, True])
def test_cached_beam_search_equals_uncached_recomputation(tiny_model, share_beam_cache):
    """Both caches: one row per beam, reordered; one shared row per sentence."""
    source = _sources()
    beam_size, extra = 3, 4
    ids, scores = translate(
        tiny_model,
        source,
        DecodingConfig(
            beam_size=beam_size,
            max_extra_length=extra,
            share_beam_cache=share_beam_cache,
        ),
        bos_id=BOS_ID,
        eos_id=EOS_ID,
    )
    max_length, max_lengths = output_lengths(source, extra)
    fn, cache = _uncached_step(tiny_model, source, beam_size, max_length)
    expected_ids, expected_scores = beam_search(
        fn,
        ops.full((len(source),), BOS_ID, "int32"),
        cache,
        beam_size=beam_size,
        alpha=0.6,
        eos_id=EOS_ID,
        max_length=max_length,
        max_lengths=max_lengths,
    )
    np.testing.assert_array_equal(np.array(ids), np.array(expected_ids))
    np.testing.assert_allclose(
        np.array(scores), np.array(expected_scores), rtol=1e-4, atol=1e-5
    )
    # Not degenerate: varied n-best lists, short and long hypotheses.
    hypotheses = np.array(ids).reshape(-1, max_length)
    lengths = (hypotheses != 0).sum(1)
    assert len(set(map(tuple, hypotheses))) > beam_size
    assert lengths.min() < lengths.max()


@pytest.mark.parametrize("share_beam_cache", [False, True])
def test_beam_size_1_with_alpha_0_equals_greedy(tiny_model, share_beam_cache):
    source = _sources()
    beam = DecodingConfig(
        method="beam",
        beam_size=1,
        alpha=0.0,
        max_extra_length=5,
        share_beam_cache=share_beam_cache,
    )
    beam_ids, beam_scores = translate(tiny_model, source, beam)
    greedy = dataclasses.replace(beam, method="greedy")
    greedy_ids, greedy_scores = translate(tiny_model, source, greedy)
    np.testing.assert_array_equal(np.array(beam_ids), np.array(greedy_ids))
    np.testing.assert_allclose(
        np.array(beam_scores), np.array(greedy_scores), rtol=1e-5
    )


def test_output_length_is_source_length_plus_extra(tiny_model):
    source = _sources()
    source_lengths = (source != 0).sum(1)
    for method in ("beam", "greedy", "sample"):
        config = DecodingConfig(method=method, max_extra_length=2)
        ids, scores = translate(tiny_model, source, config, seed=1)
        ids = np.array(ids)
        assert ids.shape[-1] == source.shape[1] + 2
        for b, length in enumerate(source_lengths):
            assert np.all(ids[b, :, length + 2 :] == 0)
        assert np.all(np.isfinite(np.array(scores)))


@pytest.mark.parametrize("position_encoding", ["sinusoidal", "learned"])
def test_empty_full_and_mixed_sources_decode(position_encoding):
    width = 8
    # Learned positions stop at 10, below width + 50: the buffer is capped.
    model = make_tiny_model(position_encoding=position_encoding, max_sequence_length=10)
    empty = np.zeros((1, width), "int32")
    empty[0, 0] = EOS_ID  # an empty sentence: only eos
    full = np.random.default_rng(0).integers(4, VOCAB_SIZE, (1, width))
    full = full.astype("int32")  # a source at the maximum length, no padding
    all_padding = np.zeros((1, width), "int32")
    expected_width = 10 if position_encoding == "learned" else width + 50
    mixed = np.concatenate([empty, full, all_padding])
    beam = DecodingConfig()  # a shared beam cache, the default
    reordered = DecodingConfig(share_beam_cache=False)
    runs = [(beam, (empty, full, mixed)), (reordered, (mixed,))]
    runs += [(DecodingConfig(method="greedy"), (mixed,))]
    if position_encoding == "learned":
        runs = [(beam, (mixed,)), (reordered, (mixed,))]
    for config, sources in runs:
        # Compiled (tf.function without XLA, or jax.jit), once per shape.
        fn = compiled_translate(model, config, jit_compile=False)
        for source in sources:
            ids, scores = fn(source)
            assert np.array(ids).shape[::2] == (len(source), expected_width)
            assert not np.any(np.isnan(np.array(scores)))


def test_sampling_is_reproducible_with_a_seed(tiny_model):
    source = _sources()
    fn = compiled_translate(
        tiny_model, DecodingConfig(method="sample", top_k=4), jit_compile=False, seed=3
    )
    first, _ = fn(source)
    second, _ = fn(source)
    np.testing.assert_array_equal(np.array(first), np.array(second))


def test_default_config_is_the_papers_beam_search(tiny_model):
    source = _sources()
    ids, scores = translate(tiny_model, source)
    expected_ids, expected_scores = translate(
        tiny_model,
        source,
        DecodingConfig(method="beam", beam_size=4, alpha=0.6, max_extra_length=50),
    )
    assert np.array(ids).shape == (len(source), 4, source.shape[1] + 50)
    np.testing.assert_array_equal(np.array(ids), np.array(expected_ids))
    np.testing.assert_array_equal(np.array(scores), np.array(expected_scores))


def test_n_best_is_left_to_the_caller(tiny_model):
    source = _sources()
    config = DecodingConfig(beam_size=3, n_best=2, max_extra_length=3)
    ids, scores = translate(tiny_model, source, config)
    all_ids, all_scores = translate(
        tiny_model, source, dataclasses.replace(config, n_best=1)
    )
    assert np.array(ids).shape[1] == config.num_hypotheses == 3
    np.testing.assert_array_equal(np.array(ids), np.array(all_ids))
    np.testing.assert_array_equal(np.array(scores), np.array(all_scores))


def test_rejects_a_config_that_is_not_a_decoding_config(tiny_model):
    # The old positional `translate(model, ids, bos_id, eos_id, ...)`.
    with pytest.raises(TypeError, match="config=2"):
        translate(tiny_model, _sources(), 2)
    with pytest.raises(TypeError, match="config="):
        compiled_translate(tiny_model, {"method": "greedy"})


def test_tensor_alpha_and_max_extra_length_equal_python_values(tiny_model):
    # The exported SavedModel passes per-request tensors through the config.
    source = _sources()
    config = DecodingConfig(beam_size=2, alpha=0.8, max_extra_length=3)
    expected_ids, expected_scores = translate(tiny_model, source, config)
    width = source.shape[1] + 3
    tensors = dataclasses.replace(
        config,
        alpha=ops.convert_to_tensor(0.8, "float32"),
        max_extra_length=ops.convert_to_tensor(3, "int32"),
    )
    ids, scores = translate(tiny_model, source, tensors, max_length=width)
    np.testing.assert_array_equal(np.array(ids), np.array(expected_ids))
    np.testing.assert_allclose(np.array(scores), np.array(expected_scores), rtol=1e-6)
    with pytest.raises(ValueError, match="needs a static `max_length`"):
        translate(tiny_model, source, tensors)


def test_rejects_an_unknown_method():
    with pytest.raises(ValueError, match="method='nucleus'"):
        DecodingConfig(method="nucleus")


@tensorflow_only("A run-time buffer size needs TensorFlow graph mode.")
@pytest.mark.parametrize(
    "share_beam_cache, position_encoding", [(True, "sinusoidal"), (False, "learned")]
)
def test_run_time_buffer_follows_the_batch(share_beam_cache, position_encoding):
    # As the exported translator runs it: one trace for every source width,
    # the buffer S + extra a tensor (capped at 10 learned positions). Each
    # width gives what `translate` gives with its own static buffer.
    import tensorflow as tf

    model = make_tiny_model(position_encoding=position_encoding, max_sequence_length=10)
    extra = 3
    config = DecodingConfig(
        beam_size=3, max_extra_length=extra, share_beam_cache=share_beam_cache
    )

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
    def search(source):
        return translate(model, source, config, max_length=tf.shape(source)[1] + extra)

    for width in (2, 8):
        source = _sources(batch_size=3, width=width, seed=width)
        ids, scores = search(source)
        expected_ids, expected_scores = translate(model, source, config)
        assert ids.shape == expected_ids.shape
        np.testing.assert_array_equal(np.array(ids), np.array(expected_ids))
        np.testing.assert_allclose(
            np.array(scores), np.array(expected_scores), atol=1e-5, rtol=1e-6
        )
    assert search.experimental_get_tracing_count() == 1
