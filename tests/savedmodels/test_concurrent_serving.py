"""8 threads on one loaded export's signatures, as TF Serving calls them."""

import concurrent.futures

import tensorflow as tf

from tests.savedmodels.conftest import fixture_sources


def _call(signatures, request):
    name, texts, beam = request
    try:
        if name == "serving_default":
            out = signatures[name](text=tf.constant(texts))
        else:
            out = signatures[name](
                text=tf.constant(texts),
                beam_size=tf.constant(beam),
                alpha=tf.constant(0.6),
                max_extra_length=tf.constant(5),
                n_best=tf.constant(1),
            )
        return out["translations"].numpy().tolist(), out["scores"].numpy().round(
            4
        ).tolist()
    except tf.errors.InvalidArgumentError as error:  # a bad request
        return "InvalidArgument", "beam_size" in str(error)


def test_eight_threads_give_the_sequential_outputs(tiny_export):
    import tensorflow_text  # noqa: F401

    signatures = tf.saved_model.load(tiny_export["path"]).signatures
    sources = fixture_sources(8)
    requests = [("serving_default", sources[i : i + 2], 0) for i in range(0, 8, 2)] + [
        ("translate", sources[i : i + 1], beam)
        for i, beam in enumerate([1, 2, 4, 0, 9])
    ]
    sequential = [_call(signatures, request) for request in requests]
    assert ("InvalidArgument", True) in sequential  # bad requests included
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        for _ in range(2):
            assert (
                list(pool.map(lambda r: _call(signatures, r), requests)) == sequential
            )
    assert _call(signatures, requests[0]) == sequential[0]  # still serving
