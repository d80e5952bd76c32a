"""The graph a TensorFlow search traces: a decoder step without shape
bookkeeping where the sizes are known (BUILD_NOTES.md, "Beam search and the
cache")."""

import collections

import pytest

from keras_transformer.decoding import DecodingConfig, translate
from tests.markers import tensorflow_only

pytestmark = tensorflow_only("counts the nodes of a TensorFlow graph")


@pytest.mark.parametrize("method", ["beam", "greedy"])
def test_a_decoder_step_slices_no_shapes_in_attention_and_feed_forward(
    tiny_model, method
):
    """Traced with unknown batch and width, as the exports and the graph-mode
    searches are: the loop's self-attention and feed-forward layers take no
    sizes from run-time shapes (one step is one position, the heads and
    depths are known) but the in-place cache writer's one `Shape` per cache;
    `keras.ops.shape` had made a `Shape` and a slice with three constants
    per unknown size, 22 slices in each self-attention layer."""
    import tensorflow as tf

    config = DecodingConfig(method=method, beam_size=3, max_extra_length=5)
    search = tf.function(
        lambda source: translate(tiny_model, source, config, max_length=12),
        input_signature=[tf.TensorSpec([None, None], tf.int32)],
        autograph=False,
    )
    graph_def = search.get_concrete_function().graph.as_graph_def()
    counts = collections.Counter()
    for function in graph_def.library.function:
        if not function.signature.name.startswith("while_body"):
            continue
        for node in function.node_def:
            scope = node.name.split("/")
            layer = next(
                (s for s in scope if s.startswith(("self_attention", "feed_forward"))),
                None,
            )
            if layer is not None and "norm" not in layer:
                counts[layer.split("_1")[0].rstrip("_"), node.op] += 1
    assert counts["self_attention", "MatMul"] > 0  # the scopes were found
    assert counts["self_attention", "StridedSlice"] == 0
    assert counts["feed_forward", "StridedSlice"] == 0
    assert counts["feed_forward", "Shape"] == 0
    # Keys and values: one `Shape` of each cache written in place.
    assert counts["self_attention", "InplaceUpdate"] > 0
    assert (
        counts["self_attention", "Shape"] == counts["self_attention", "InplaceUpdate"]
    )
