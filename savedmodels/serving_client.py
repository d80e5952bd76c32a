"""A small client for the translator behind TF Serving, over REST or gRPC.

Calls two of the text signatures of the export (`TranslatorModule`):
`serving_default(text)` and `translate(text, beam_size, alpha,
max_extra_length, n_best)`, and returns plain Python lists, the same for both
protocols:

    {"translations": [[str] * n] * B, "scores": [[float] * n] * B}

- **REST** (`protocol="rest"`, TF Serving's port 8501) uses only the standard
  library (`urllib`): `POST /v1/models/<name>[/versions/<v>|/labels/<l>]:predict`
  with `{"signature_name": "serving_default", "instances": [...]}` (row
  format) or, for `translate`, whose scalar parameters have no batch
  dimension, `{"signature_name": "translate", "inputs": {...}}` (columnar
  format). `bytes` texts that are not UTF-8 go as `{"b64": ...}`.
- **gRPC** (`protocol="grpc"`, port 8500) uses
  `tensorflow_serving.apis.prediction_service_pb2_grpc.PredictionServiceStub`
  and `predict_pb2.PredictRequest` (tensorflow-serving-api and grpcio, both
  dependencies of the package).

Behaviour on unusual input (both protocols): an empty or whitespace-only text
gives an empty translation with score 0 (the export's rule); a batch of 0
texts gives `{"translations": [], "scores": []}`, over gRPC from the server
(a `[0]` string tensor), over REST without a request, since TF Serving's REST
API refuses an empty `instances` list ("No values in 'instances' array").
Errors of the server (e.g. `n_best > beam_size`, an unknown model) raise
`ServingError` with the server's status code and message; the server keeps
serving.
"""

import base64
import json
import urllib.error
import urllib.parse
import urllib.request

import numpy as np

PROTOCOLS = ("rest", "grpc")
# gRPC's default 4 MiB is small for a batch of long sentences.
_GRPC_MAX_MESSAGE_BYTES = 64 * 1024 * 1024


class ServingError(RuntimeError):
    """A request the server refused or could not run.

    Attributes:
        code: str. The gRPC status name (`"INVALID_ARGUMENT"`,
            `"NOT_FOUND"`, `"UNAVAILABLE"`, ...) or, over REST, `"HTTP <n>"`
            (`"UNAVAILABLE"` when no connection could be made).
        message: str. The server's message.
    """

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class ServingClient:
    """Translates through a TF Serving model server (REST or gRPC).

    See the module docstring for the requests, the results and the
    behaviour on empty input.

    Args:
        address: str. `"host:port"` of the server's REST (default 8501) or
            gRPC (default 8500) port; for REST also `"http://host:port"` or
            `"https://..."`.
        model_name: str. The model's `name` in `models.config` (or
            `--model_name`).
        protocol: str. `"rest"` or `"grpc"`. Defaults to `"rest"`.
        version: optional positive int. The version to ask for; `None` lets
            the server choose (its latest).
        version_label: optional str. A label of `models.config`
            (`version_labels`), instead of `version`.
        timeout: float. Seconds per request. Defaults to `60.0`.

    Examples:
        >>> client = ServingClient("localhost:8500", "ende", protocol="grpc")
        >>> client.serving_default(["Hello world."])["translations"]
        [['Hallo Welt.']]
        >>> client.translate(["Hello world."], beam_size=4, alpha=0.6,
        ...                  max_extra_length=50, n_best=2)["scores"]
        [[-1.52, -2.07]]
    """

    def __init__(
        self,
        address,
        model_name,
        protocol="rest",
        version=None,
        version_label=None,
        timeout=60.0,
    ):
        if protocol not in PROTOCOLS:
            raise ValueError(
                f"`protocol` must be one of {PROTOCOLS}. "
                f"Received: protocol={protocol!r}"
            )
        if not isinstance(model_name, str) or not model_name or "/" in model_name:
            raise ValueError(
                "`model_name` must be a non-empty string without '/'. "
                f"Received: model_name={model_name!r}"
            )
        if version is not None and (
            not isinstance(version, int) or isinstance(version, bool) or version < 1
        ):
            raise ValueError(
                "`version` must be a positive integer or None. "
                f"Received: version={version!r}"
            )
        if version is not None and version_label is not None:
            raise ValueError(
                "Pass `version` or `version_label`, not both. Received: "
                f"version={version}, version_label={version_label!r}"
            )
        if not float(timeout) > 0:
            raise ValueError(f"`timeout` must be positive. Received: timeout={timeout}")
        self.address = address
        self.model_name = model_name
        self.protocol = protocol
        self.version = version
        self.version_label = version_label
        self.timeout = float(timeout)
        self._channel = None
        self._stub = None
        if protocol == "grpc":
            self._connect_grpc()

    # === Signatures ===

    def serving_default(self, texts) -> dict:
        """Translates `texts` with the decoding parameters fixed at export.

        Args:
            texts: list or tuple of str (or UTF-8 `bytes`), one sentence each.

        Returns:
            `{"translations": [[str] * n] * B, "scores": [[float] * n] * B}`.

        Raises:
            ValueError: `texts` is not a sequence of strings.
            ServingError: the server refused or failed the request.
        """
        return self._predict("serving_default", _check_texts(texts), {})

    def translate(self, texts, beam_size, alpha, max_extra_length, n_best) -> dict:
        """Translates `texts` with decoding parameters chosen per request.

        The server checks the ranges (`1 <= n_best <= beam_size <=
        max_beam_size`, `alpha >= 0`, `0 <= max_extra_length <=
        max_extra_length_limit`) and answers `INVALID_ARGUMENT` otherwise.

        Args:
            texts: list or tuple of str (or UTF-8 `bytes`).
            beam_size: int. K of the search (§6.1: 4).
            alpha: float. The length penalty's alpha (§6.1: 0.6).
            max_extra_length: int. Output tokens beyond the source length
                (§6.1: 50).
            n_best: int. Hypotheses returned per sentence.

        Returns:
            `{"translations": [[str] * n_best] * B, "scores": [[float] *
            n_best] * B}`.

        Raises:
            ValueError: bad argument types.
            ServingError: the server refused or failed the request.
        """
        params = {
            "beam_size": _check_int("beam_size", beam_size),
            "alpha": _check_float("alpha", alpha),
            "max_extra_length": _check_int("max_extra_length", max_extra_length),
            "n_best": _check_int("n_best", n_best),
        }
        return self._predict("translate", _check_texts(texts), params)

    def close(self):
        """Closes the gRPC channel (nothing to do for REST)."""
        if self._channel is not None:
            self._channel.close()
            self._channel = None
            self._stub = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    # === Transport ===

    def _predict(self, signature, texts, params):
        if self.protocol == "grpc":
            return self._predict_grpc(signature, texts, params)
        if not texts:
            return {"translations": [], "scores": []}
        return self._predict_rest(signature, texts, params)

    def _url(self):
        base = self.address
        if "://" not in base:
            base = f"http://{base}"
        path = f"/v1/models/{urllib.parse.quote(self.model_name, safe='')}"
        if self.version is not None:
            path += f"/versions/{self.version}"
        elif self.version_label is not None:
            path += f"/labels/{urllib.parse.quote(self.version_label, safe='')}"
        return base.rstrip("/") + path + ":predict"

    def _predict_rest(self, signature, texts, params):
        values = [_json_text(text) for text in texts]
        if params:
            body = {"signature_name": signature, "inputs": {"text": values, **params}}
        else:
            body = {"signature_name": signature, "instances": values}
        request = urllib.request.Request(
            self._url(),
            data=json.dumps(body).encode("utf-8"),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                reply = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            raise ServingError(f"HTTP {error.code}", _rest_error(error)) from None
        except urllib.error.URLError as error:
            raise ServingError("UNAVAILABLE", str(error.reason)) from None
        if "predictions" in reply:  # row format: one object per sentence
            rows = reply["predictions"]
            outputs = {
                "translations": [row["translations"] for row in rows],
                "scores": [row["scores"] for row in rows],
            }
        else:  # columnar format
            outputs = reply["outputs"]
        return {
            "translations": [
                [_decode(_from_json_text(t)) for t in row]
                for row in outputs["translations"]
            ],
            "scores": [[float(s) for s in row] for row in outputs["scores"]],
        }

    def _connect_grpc(self):
        try:
            import grpc
            from tensorflow_serving.apis import prediction_service_pb2_grpc
        except ImportError as error:
            raise ImportError(
                "The gRPC client needs tensorflow-serving-api and grpcio, "
                "dependencies of keras-transformer: pip install "
                '"tensorflow-serving-api>=2.21,<2.22"'
            ) from error
        options = [
            ("grpc.max_send_message_length", _GRPC_MAX_MESSAGE_BYTES),
            ("grpc.max_receive_message_length", _GRPC_MAX_MESSAGE_BYTES),
        ]
        self._channel = grpc.insecure_channel(self.address, options=options)
        self._stub = prediction_service_pb2_grpc.PredictionServiceStub(self._channel)

    def _predict_grpc(self, signature, texts, params):
        import grpc
        from tensorflow.core.framework import types_pb2
        from tensorflow_serving.apis import predict_pb2

        if self._stub is None:
            self._connect_grpc()
        request = predict_pb2.PredictRequest()
        request.model_spec.name = self.model_name
        request.model_spec.signature_name = signature
        if self.version is not None:
            request.model_spec.version.value = self.version
        elif self.version_label is not None:
            request.model_spec.version_label = self.version_label
        text = request.inputs["text"]
        text.dtype = types_pb2.DT_STRING
        text.tensor_shape.dim.add().size = len(texts)
        text.string_val.extend(
            t.encode("utf-8") if isinstance(t, str) else t for t in texts
        )
        for name, value in params.items():
            tensor = request.inputs[name]  # a scalar: no dims
            if isinstance(value, float):
                tensor.dtype = types_pb2.DT_FLOAT
                tensor.float_val.append(value)
            else:
                tensor.dtype = types_pb2.DT_INT32
                tensor.int_val.append(value)
        try:
            response = self._stub.Predict(request, timeout=self.timeout)
        except grpc.RpcError as error:
            raise ServingError(error.code().name, error.details()) from None
        translations = _from_tensor_proto(response.outputs["translations"])
        scores = _from_tensor_proto(response.outputs["scores"])
        return {
            "translations": [[_decode(t) for t in row] for row in translations],
            "scores": [[float(s) for s in row] for row in scores],
        }


# === Helpers ===


def _check_texts(texts):
    if isinstance(texts, (str, bytes)) or not isinstance(texts, (list, tuple)):
        raise ValueError(
            "`texts` must be a list or tuple of strings (one per sentence). "
            f"Received: texts={texts!r}"
        )
    for index, text in enumerate(texts):
        if not isinstance(text, (str, bytes)):
            raise ValueError(
                "`texts` must hold str or bytes. "
                f"Received: texts[{index}]={text!r} of type {type(text).__name__}"
            )
    return list(texts)


def _check_int(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"`{name}` must be an integer. Received: {name}={value!r}")
    return int(value)


def _check_float(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise ValueError(f"`{name}` must be a number. Received: {name}={value!r}")
    return float(value)


def _json_text(text):
    """A JSON value for one string: the text, or `{"b64": ...}` for bytes
    that are not UTF-8 (TF Serving's REST encoding of binary strings)."""
    if isinstance(text, bytes):
        try:
            return text.decode("utf-8")
        except UnicodeDecodeError:
            return {"b64": base64.b64encode(text).decode("ascii")}
    return text


def _from_json_text(value):
    if isinstance(value, dict):  # {"b64": ...}, outputs named *_bytes
        return base64.b64decode(value["b64"])
    return value


def _decode(text):
    return text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text


def _rest_error(error):
    body = error.read().decode("utf-8", errors="replace")
    try:
        return json.loads(body)["error"]
    except (ValueError, KeyError, TypeError):
        return body or error.reason


def _from_tensor_proto(proto):
    """A `TensorProto` of strings, floats or ints as nested lists.

    Reads repeated `*_val` fields or `tensor_content`, and broadcasts a single
    value over the shape (the proto's rule for repeated fields of length 1).
    """
    from tensorflow.core.framework import types_pb2

    shape = [dim.size for dim in proto.tensor_shape.dim]
    size = int(np.prod(shape)) if shape else 1
    numeric = {
        types_pb2.DT_FLOAT: ("float_val", "<f4"),
        types_pb2.DT_DOUBLE: ("double_val", "<f8"),
        types_pb2.DT_INT32: ("int_val", "<i4"),
        types_pb2.DT_INT64: ("int64_val", "<i8"),
    }
    if proto.dtype == types_pb2.DT_STRING:
        values = np.empty(len(proto.string_val), dtype=object)
        values[:] = list(proto.string_val)
    elif proto.dtype in numeric:
        field, dtype = numeric[proto.dtype]
        if proto.tensor_content:
            values = np.frombuffer(proto.tensor_content, dtype=dtype)
        else:
            values = np.array(getattr(proto, field), dtype=dtype)
    else:
        raise ValueError(
            "Unexpected output dtype from the server. "
            f"Received: dtype={types_pb2.DataType.Name(proto.dtype)}"
        )
    if values.size == 1 and size > 1:
        values = np.repeat(values, size)
    elif values.size == 0 and size > 0:  # every element at its default
        values = np.full(size, b"" if proto.dtype == types_pb2.DT_STRING else 0)
    return values.reshape(shape).tolist()
