"""Loopback stand-ins for TF Serving's gRPC and REST predict APIs (tests only).

TF Serving's model server cannot be installed here, so the client tests talk
to these: a gRPC `PredictionService` (tensorflow-serving-api's servicer base)
and a REST `/v1/models/<name>[...]:predict` endpoint (`http.server`), both on
127.0.0.1 with a free port, in the test process. Each serves SavedModels
loaded with `tf.saved_model.load` by calling their signatures. They follow TF
Serving's wire formats (TensorProto in and out; JSON row and columnar formats,
`{"b64": ...}` for binary strings, `{"error": ...}` with a 4xx status,
"No values in 'instances' array" for an empty list) but not its loading
(TF Serving runs the graph in a session, as `saved_model_cli run` does: see
test_saved_model_cli.py), its batching or its model management. Every request
is kept in `requests` so tests can check what the client sent.
"""

import base64
import json
import re
import threading
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc
import numpy as np
import tensorflow as tf
from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc

_STATUS = {code.value[0]: code for code in grpc.StatusCode}
_REST_PATH = re.compile(
    r"^/v1/models/(?P<name>[^/:]+)"
    r"(?:/versions/(?P<version>\d+)|/labels/(?P<label>[^/:]+))?:predict$"
)
_HTTP_STATUS = {"NOT_FOUND": 404, "INVALID_ARGUMENT": 400}


class StandInError(Exception):
    """A refused request: a gRPC status name and a message."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def run_signature(models, name, signature_name, inputs):
    """Calls `models[name].signatures[signature_name](**inputs)` with inputs
    cast to the signature's dtypes; numpy outputs. Raises `StandInError`."""
    if name not in models:
        raise StandInError(
            "NOT_FOUND", f"Servable not found for request: Latest({name})"
        )
    signature_name = signature_name or "serving_default"
    signatures = models[name].signatures
    if signature_name not in signatures:
        raise StandInError(
            "INVALID_ARGUMENT", f'Serving signature key "{signature_name}" not found.'
        )
    function = signatures[signature_name]
    specs = function.structured_input_signature[1]
    if set(inputs) != set(specs):
        raise StandInError(
            "INVALID_ARGUMENT",
            f"Expected inputs {sorted(specs)}, got {sorted(inputs)}",
        )
    tensors = {}
    for key, spec in specs.items():
        value = np.asarray(
            inputs[key], dtype=object if spec.dtype == tf.string else None
        )
        if value.ndim != spec.shape.rank:
            raise StandInError(
                "INVALID_ARGUMENT",
                f"input {key}: expected rank {spec.shape.rank}, "
                f"got shape {value.shape}",
            )
        tensors[key] = tf.constant(value, dtype=spec.dtype)
    try:
        outputs = function(**tensors)
    except tf.errors.OpError as error:
        raise StandInError(_STATUS[error.error_code].name, error.message) from None
    return {key: value.numpy() for key, value in outputs.items()}


class PredictionServiceStandIn(prediction_service_pb2_grpc.PredictionServiceServicer):
    """`Predict` of TF Serving's gRPC API over `{name: loaded SavedModel}`."""

    def __init__(self, models):
        self.models = models
        self.requests = []

    def Predict(self, request, context):  # noqa: N802 (the gRPC method name)
        self.requests.append(request)
        inputs = {key: tf.make_ndarray(proto) for key, proto in request.inputs.items()}
        try:
            outputs = run_signature(
                self.models,
                request.model_spec.name,
                request.model_spec.signature_name,
                inputs,
            )
        except StandInError as error:
            context.abort(getattr(grpc.StatusCode, error.code), error.message)
        response = predict_pb2.PredictResponse()
        response.model_spec.name = request.model_spec.name
        response.model_spec.version.value = 1
        response.model_spec.signature_name = (
            request.model_spec.signature_name or "serving_default"
        )
        for key, value in outputs.items():
            response.outputs[key].CopyFrom(tf.make_tensor_proto(value))
        return response


def start_grpc(models):
    """`(server, servicer, "127.0.0.1:<port>")`, started; `server.stop(None)`."""
    servicer = PredictionServiceStandIn(models)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    prediction_service_pb2_grpc.add_PredictionServiceServicer_to_server(
        servicer, server
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, servicer, f"127.0.0.1:{port}"


def _json_value(value):
    if isinstance(value, np.ndarray):
        return [_json_value(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value.item() if isinstance(value, np.generic) else value


def _from_json(value):
    if isinstance(value, dict) and set(value) == {"b64"}:
        return base64.b64decode(value["b64"])
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    return value


def _rest_predict(models, name, body):
    signature_name = body.get("signature_name", "serving_default")
    if ("instances" in body) == ("inputs" in body):
        raise StandInError("INVALID_ARGUMENT", "Missing 'inputs' or 'instances' key")
    if "instances" in body:
        instances = body["instances"]
        if not isinstance(instances, list) or not instances:
            raise StandInError("INVALID_ARGUMENT", "No values in 'instances' array")
        if isinstance(instances[0], dict) and set(instances[0]) != {"b64"}:
            inputs = {
                k: [_from_json(row[k]) for row in instances] for k in instances[0]
            }
        else:  # a plain list: the signature's single input
            signature = (
                models[name].signatures[signature_name] if name in models else None
            )
            key = (
                next(iter(signature.structured_input_signature[1])) if signature else ""
            )
            inputs = {key: _from_json(instances)}
        outputs = run_signature(models, name, signature_name, inputs)
        batch = len(next(iter(outputs.values())))
        rows = [
            {k: _json_value(v[i]) for k, v in outputs.items()} for i in range(batch)
        ]
        return {"predictions": rows}
    inputs = {k: _from_json(v) for k, v in body["inputs"].items()}
    outputs = run_signature(models, name, signature_name, inputs)
    return {"outputs": {k: _json_value(v) for k, v in outputs.items()}}


def start_rest(models):
    """`(server, requests, "127.0.0.1:<port>")`, serving in a thread;
    `server.shutdown()`. `requests` holds `(path, body)` of each request."""
    requests = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's method name)
            length = int(self.headers.get("Content-Length", 0))
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
                requests.append((self.path, body))
                match = _REST_PATH.match(self.path)
                if match is None:
                    raise StandInError(
                        "NOT_FOUND", f"Malformed request: POST {self.path}"
                    )
                reply, status = _rest_predict(models, match["name"], body), 200
            except StandInError as error:
                reply = {"error": error.message}
                status = _HTTP_STATUS.get(error.code, 500)
            except (ValueError, KeyError, TypeError) as error:
                reply, status = {"error": f"JSON Parse error: {error}"}, 400
            data = json.dumps(reply).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):  # quiet test output
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, requests, f"127.0.0.1:{server.server_address[1]}"
