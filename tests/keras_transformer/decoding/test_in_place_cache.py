import threading

import numpy as np
import pytest
from keras import ops

from keras_transformer.decoding import DecodingConfig, compiled_translate, translate
from keras_transformer.decoding.in_place_cache import (
    owned_caches,
    write_rows_in_place,
    writes_in_place,
)
from tests.markers import tensorflow_only

pytestmark = tensorflow_only("in-place cache writes are for TensorFlow graphs")


def _graph_op_types(concrete_function):
    """Op types of a concrete function and of every function it calls."""
    graph_def = concrete_function.graph.as_graph_def()
    types = {node.op for node in graph_def.node}
    for function in graph_def.library.function:
        types.update(node.op for node in function.node_def)
    return types


@pytest.mark.parametrize("new_positions", [1, 3])
def test_write_rows_in_place_equals_slice_update(new_positions):
    import tensorflow as tf

    rng = np.random.default_rng(0)
    cache = rng.normal(size=(2, 3, 7, 4)).astype("float32")
    updates = rng.normal(size=(2, 3, new_positions, 4)).astype("float32")

    @tf.function(autograph=False)
    def write(cache, start):
        # The function's argument is the caller's: write a private copy.
        return write_rows_in_place(tf.raw_ops.DeepCopy(x=cache), start, updates)

    for start in (0, 2, 7 - new_positions):
        expected = ops.slice_update(cache, [0, 0, start, 0], updates)
        np.testing.assert_array_equal(
            write(tf.constant(cache), tf.constant(start)).numpy(), np.array(expected)
        )


def test_only_tensorflow_graphs_outside_xla_write_in_place():
    import tensorflow as tf

    assert not writes_in_place()  # eager
    caches = [ops.zeros((1, 2, 3, 4))]
    with owned_caches(caches) as owned:
        assert owned is caches
    seen = {}

    def record(name):
        seen[name] = writes_in_place()
        return tf.constant(0)

    tf.function(lambda: record("graph"))()
    tf.function(lambda: record("xla"), jit_compile=True)()
    assert seen == {"graph": True, "xla": False}


@pytest.mark.parametrize(
    "method, share_beam_cache", [("greedy", True), ("beam", True), ("beam", False)]
)
def test_graph_search_writes_in_place_and_equals_eager(
    tiny_model, method, share_beam_cache
):
    import tensorflow as tf

    rng = np.random.default_rng(5)
    source = rng.integers(4, 10, (4, 6)).astype("int32")
    source[2, 3:] = 0
    config = DecodingConfig(
        method=method,
        beam_size=3,
        max_extra_length=5,
        share_beam_cache=share_beam_cache,
    )
    expected_ids, expected_scores = translate(tiny_model, source, config)
    graph = compiled_translate(tiny_model, config, jit_compile=False)
    xla = compiled_translate(tiny_model, config, jit_compile=True)
    assert "InplaceUpdate" in _graph_op_types(
        graph.get_concrete_function(tf.constant(source))
    )
    assert "InplaceUpdate" not in _graph_op_types(
        xla.get_concrete_function(tf.constant(source))
    )
    # Called again, each call writes its own copy of the initial caches.
    for _ in range(2):
        ids, scores = graph(source)
        np.testing.assert_array_equal(np.array(ids), np.array(expected_ids))
        np.testing.assert_allclose(
            np.array(scores), np.array(expected_scores), rtol=1e-5, atol=1e-6
        )


@pytest.mark.parametrize("method", ["beam", "greedy"])
def test_graph_search_drops_done_sentences_and_equals_eager(
    tiny_model, monkeypatch, method
):
    # 16 sentences of 1 to 7 tokens: in a graph the search drops the done
    # ones (their rows of the keys and values and of the encoder cache with
    # them) and finds what eager search, which keeps every row, finds.
    import tensorflow as tf

    rng = np.random.default_rng(3)
    source = rng.integers(4, 10, (16, 7)).astype("int32")
    for row, length in enumerate(rng.integers(1, 8, 16)):
        source[row, length:] = 0
    config = DecodingConfig(method=method, beam_size=3, max_extra_length=6)
    rows_per_sentence = config.num_hypotheses
    expected_ids, expected_scores = translate(tiny_model, source, config)
    rows, steps = tf.Variable(0), tf.Variable(0)
    decode_step = tiny_model.decode_step

    def counting_step(ids, *args, **kwargs):
        rows.assign_add(tf.shape(ids)[0])
        steps.assign_add(1)
        return decode_step(ids, *args, **kwargs)

    monkeypatch.setattr(tiny_model, "decode_step", counting_step)
    ids, scores = compiled_translate(tiny_model, config, jit_compile=False)(source)
    np.testing.assert_array_equal(np.array(ids), np.array(expected_ids))
    np.testing.assert_allclose(
        np.array(scores), np.array(expected_scores), rtol=1e-5, atol=1e-6
    )
    # fewer decoder rows than every step over all 16 sentences
    assert int(rows.numpy()) < int(steps.numpy()) * 16 * rows_per_sentence


def test_concurrent_calls_do_not_share_cache_buffers(tiny_model):
    """Two threads run one concrete function at once, as TF Serving does."""
    config = DecodingConfig(method="beam", beam_size=3, max_extra_length=6)
    rng = np.random.default_rng(9)
    sources = [rng.integers(4, 10, (3, 5)).astype("int32") for _ in range(4)]
    expected = [np.array(translate(tiny_model, s, config)[0]) for s in sources]
    graph = compiled_translate(tiny_model, config, jit_compile=False)
    graph(sources[0])  # one trace, shared by the threads
    results, errors = {}, []

    def run(thread):
        try:
            for repeat in range(5):
                k = (thread + repeat) % len(sources)
                results[(thread, repeat)] = (k, np.array(graph(sources[k])[0]))
        except Exception as error:  # noqa: BLE001 (reported below)
            errors.append(error)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(results) == 20
    for k, ids in results.values():
        np.testing.assert_array_equal(ids, expected[k])
