"""`ServingClient` over gRPC and REST, against loopback stand-ins for TF Serving.

TF Serving cannot be installed here: the servers are stand-ins
(tests/savedmodels/serving_stand_ins.py), a gRPC `PredictionService` and a
REST predict endpoint on 127.0.0.1 with free ports, serving the shared tiny
export loaded with `tf.saved_model.load` in this process. They check the
client's requests (tensor dtypes and shapes, JSON formats) and its decoding of
responses: every result must equal the in-process signature call.
"""

import numpy as np
import pytest
import tensorflow as tf

from savedmodels.serving_client import ServingClient, ServingError
from tests.markers import tensorflow_only

pytestmark = tensorflow_only("SavedModel export needs the TensorFlow backend.")

TEXTS = ["The Schedule Library", "Sets an object reference on a variable.", "", " \t "]
INVALID_UTF8 = b"Hallo \xff\xfe Welt"
TRANSLATE = dict(beam_size=3, alpha=1.0, max_extra_length=7, n_best=2)


@pytest.fixture(autouse=True)
def _seed_and_policy():
    """Replaces tests/conftest.py's fixture of this name for this file: no
    `keras.utils.set_random_seed`, which clears TensorFlow's kernel cache and
    so would make every test instantiate the signatures' functions again
    (seconds each). Nothing here is random."""
    yield


@pytest.fixture(scope="module")
def served(tiny_export):
    from tests.savedmodels.serving_stand_ins import start_grpc, start_rest

    loaded = tf.saved_model.load(tiny_export["path"])
    models = {"ende": loaded}
    grpc_server, grpc_servicer, grpc_address = start_grpc(models)
    rest_server, rest_requests, rest_address = start_rest(models)
    clients = {
        "grpc": ServingClient(grpc_address, "ende", protocol="grpc"),
        "rest": ServingClient(rest_address, "ende", protocol="rest"),
    }
    yield {
        "loaded": loaded,
        "clients": clients,
        "grpc_requests": grpc_servicer.requests,
        "rest_requests": rest_requests,
        "addresses": {"grpc": grpc_address, "rest": rest_address},
    }
    clients["grpc"].close()
    grpc_server.stop(None)
    rest_server.shutdown()
    rest_server.server_close()


def _in_process(loaded, signature, texts, **params):
    """The signature called directly: `{"translations": [[str]], "scores":
    np.ndarray}`."""
    inputs = {"text": tf.constant(texts, tf.string)}
    if params:
        inputs.update(
            beam_size=tf.constant(params["beam_size"], tf.int32),
            alpha=tf.constant(params["alpha"], tf.float32),
            max_extra_length=tf.constant(params["max_extra_length"], tf.int32),
            n_best=tf.constant(params["n_best"], tf.int32),
        )
    outputs = loaded.signatures[signature](**inputs)
    return {
        "translations": [
            [t.decode("utf-8", errors="replace") for t in row]
            for row in outputs["translations"].numpy()
        ],
        "scores": outputs["scores"].numpy(),
    }


def _assert_equal(result, expected):
    assert result["translations"] == expected["translations"]
    np.testing.assert_array_equal(
        np.array(result["scores"], "float32"), expected["scores"]
    )


@pytest.mark.parametrize("protocol", ["grpc", "rest"])
def test_serving_default_equals_the_signature(served, protocol):
    result = served["clients"][protocol].serving_default(TEXTS)
    assert np.array(result["scores"]).shape == (len(TEXTS), 1)
    _assert_equal(result, _in_process(served["loaded"], "serving_default", TEXTS))
    # Empty and whitespace-only texts: empty translation, score 0.
    assert result["translations"][2:] == [[""], [""]]
    assert result["scores"][2:] == [[0.0], [0.0]]


@pytest.mark.parametrize("protocol", ["grpc", "rest"])
def test_translate_equals_the_signature(served, protocol):
    result = served["clients"][protocol].translate(TEXTS, **TRANSLATE)
    assert np.array(result["scores"]).shape == (len(TEXTS), 2)
    _assert_equal(
        result, _in_process(served["loaded"], "translate", TEXTS, **TRANSLATE)
    )


@pytest.mark.parametrize("protocol", ["grpc", "rest"])
def test_bytes_that_are_not_utf8(served, protocol):
    # REST sends them as {"b64": ...}; the export replaces bad bytes by U+FFFD.
    result = served["clients"][protocol].serving_default([INVALID_UTF8, b"Hello"])
    expected = _in_process(
        served["loaded"], "serving_default", [INVALID_UTF8, b"Hello"]
    )
    _assert_equal(result, expected)


@pytest.mark.parametrize("protocol", ["grpc", "rest"])
def test_batch_of_0(served, protocol):
    client = served["clients"][protocol]
    assert client.serving_default([]) == {"translations": [], "scores": []}
    assert client.translate([], **TRANSLATE) == {"translations": [], "scores": []}


def test_grpc_requests_and_responses(served):
    client = served["clients"]["grpc"]
    client.translate(["Hello world.", "Good night."], **TRANSLATE)
    request = served["grpc_requests"][-1]
    assert request.model_spec.name == "ende"
    assert request.model_spec.signature_name == "translate"
    shapes = {
        key: (tf.dtypes.as_dtype(proto.dtype).name, tf.make_ndarray(proto).shape)
        for key, proto in request.inputs.items()
    }
    assert shapes == {
        "text": ("string", (2,)),
        "beam_size": ("int32", ()),
        "alpha": ("float32", ()),
        "max_extra_length": ("int32", ()),
        "n_best": ("int32", ()),
    }
    client.serving_default([])  # a batch of 0 reaches the server over gRPC
    request = served["grpc_requests"][-1]
    assert tf.make_ndarray(request.inputs["text"]).shape == (0,)


def test_rest_request_formats(served):
    client = served["clients"]["rest"]
    client.serving_default(["Hello world.", INVALID_UTF8])
    path, body = served["rest_requests"][-1]
    assert path == "/v1/models/ende:predict"
    assert body["signature_name"] == "serving_default"
    assert body["instances"][0] == "Hello world."
    assert set(body["instances"][1]) == {"b64"}
    client.translate(["Hello world."], **TRANSLATE)
    _, body = served["rest_requests"][-1]
    assert body == {
        "signature_name": "translate",
        "inputs": {"text": ["Hello world."], **TRANSLATE},
    }
    count = len(served["rest_requests"])
    client.serving_default([])  # no request: TF Serving refuses empty instances
    assert len(served["rest_requests"]) == count
    versioned = ServingClient(served["addresses"]["rest"], "ende", version=1)
    versioned.serving_default(["Hello"])
    assert served["rest_requests"][-1][0] == "/v1/models/ende/versions/1:predict"


@pytest.mark.parametrize(
    "protocol, invalid, not_found",
    [("grpc", "INVALID_ARGUMENT", "NOT_FOUND"), ("rest", "HTTP 400", "HTTP 404")],
)
def test_server_errors_then_keeps_serving(served, protocol, invalid, not_found):
    client = served["clients"][protocol]
    bad = dict(TRANSLATE, n_best=TRANSLATE["beam_size"] + 1)
    with pytest.raises(ServingError, match="n_best must be <= beam_size") as error:
        client.translate(["Hello world."], **bad)
    assert error.value.code == invalid
    other = ServingClient(served["addresses"][protocol], "deen", protocol=protocol)
    with pytest.raises(ServingError, match="deen") as error:
        other.serving_default(["Hello"])
    assert error.value.code == not_found
    other.close()
    assert client.serving_default(["Hello world."])["translations"][0][0] is not None


@pytest.mark.parametrize("protocol", ["grpc", "rest"])
def test_unreachable_server(protocol):
    # Port 1 on loopback: nothing listens there.
    client = ServingClient("127.0.0.1:1", "ende", protocol=protocol, timeout=5)
    with pytest.raises(ServingError) as error:
        client.serving_default(["Hello"])
    assert error.value.code == "UNAVAILABLE"
    client.close()


def test_client_validates_arguments():
    client = ServingClient("127.0.0.1:1", "ende")
    with pytest.raises(ValueError, match="Received: texts='Hello'"):
        client.serving_default("Hello")
    with pytest.raises(ValueError, match=r"texts\[1\]=3"):
        client.serving_default(["Hello", 3])
    with pytest.raises(ValueError, match="beam_size='4'"):
        client.translate(
            ["Hello"], beam_size="4", alpha=0.6, max_extra_length=5, n_best=1
        )
    with pytest.raises(ValueError, match="protocol='http'"):
        ServingClient("127.0.0.1:1", "ende", protocol="http")
    with pytest.raises(ValueError, match="version=0"):
        ServingClient("127.0.0.1:1", "ende", version=0)
    with pytest.raises(ValueError, match="model_name='a/b'"):
        ServingClient("127.0.0.1:1", "a/b")
