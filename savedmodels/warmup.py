"""TF Serving's warm-up file: requests that TF Serving replays when it loads a version.

The TensorFlow runtime initializes a SavedModel's functions lazily, on their
first call: for the exported search (one traced search per beam size, inside
a `tf.switch_case`) the first request after loading waits for far longer than
a warm one. TF Serving replays the records of
`assets.extra/tf_serving_warmup_requests` while it loads a version, before
the version serves ("SavedModel Warmup" in TF Serving's documentation: a
TFRecord file of `PredictionLog` records, at most 1,000, in the SavedModel's
`assets.extra/`). The export writes one `PredictLog` request per signature
and per beam size the signature can be asked for, and one single sentence
per decoding buffer size `serving_default` can run (`warmup_requests`), so
the first real request runs at warm speed; `replay_warmup` does the same for
a Python process that loads the export with `tf.saved_model.load`.
"""

import os

import numpy as np
import tensorflow as tf

from pipelines.tokenizers.special_tokens import PAD_ID
from savedmodels.translator_search import decoding_buffer_length

WARMUP_PATH = os.path.join("assets.extra", "tf_serving_warmup_requests")
# TF Serving reads at most this many records.
MAX_WARMUP_RECORDS = 1_000
# A sentence, and an empty line (its own code path: empty output, no search).
WARMUP_TEXTS = ("This is a warm-up request .", "")


def warmup_requests(module):
    """`[(signature_name, {input_name: numpy array})]` for `module`'s signatures.

    Every signature once with the export's decoding; a signature with a
    `beam_size` input once per beam size from 1 to `module.max_beam_size`
    (each selects its own traced search). Inputs follow each signature's
    input names: `text` the `WARMUP_TEXTS`, `source_ids` their ids, and the
    scalars the export's decoding (`n_best` 1). Then `serving_default` once
    per decoding buffer size a single sentence can get
    (`single_sentence_texts`): the first request of a buffer size sets up
    kernels for its shapes.

    Args:
        module: a `TranslatorModule` or `ParserModule`.
    """
    texts = np.array([text.encode("utf-8") for text in WARMUP_TEXTS], dtype=object)
    values = {
        "text": texts,
        "source_ids": module._text_to_ids(tf.constant(texts)).numpy(),
        "alpha": np.float32(module.decoding.alpha),
        "max_extra_length": np.int32(module.decoding.max_extra_length),
        "n_best": np.int32(1),
    }
    requests = []
    for name, function in module.signatures().items():
        inputs = [
            spec.name for spec in tf.nest.flatten(function.structured_input_signature)
        ]
        beam_sizes = [None]
        if "beam_size" in inputs:
            beam_sizes = range(1, module.max_beam_size + 1)
        for beam_size in beam_sizes:
            request = {key: values[key] for key in inputs if key != "beam_size"}
            if beam_size is not None:
                request["beam_size"] = np.int32(beam_size)
            requests.append((name, request))
    for text in single_sentence_texts(module).values():
        requests.append(
            ("serving_default", {"text": np.array([text.encode("utf-8")], object)})
        )
    return requests


def single_sentence_texts(module):
    """`{buffer length: text}`: for each decoding buffer size
    (`translator_search.decoding_buffer_length`) that one sentence sent to
    `serving_default` can get, the shortest of the warm-up sentence's words
    repeated that gets it."""
    words = WARMUP_TEXTS[0].split()
    count = module.max_input_length  # enough words: a word is at least a piece
    repeated = (words * (count // len(words) + 1))[:count]
    texts = [" ".join(repeated[:n]) for n in range(1, count + 1)]
    ids = module._text_to_ids(tf.constant(texts)).numpy()
    lengths = np.sum(ids != PAD_ID, axis=1)  # pieces and eos
    by_buffer = {}
    for text, length in zip(texts, lengths, strict=True):
        buffer = decoding_buffer_length(
            int(length), module.decoding.max_extra_length, module.max_buffer_length
        )
        by_buffer.setdefault(buffer, text)
    return by_buffer


def write_warmup_file(requests, path):
    """Writes `requests` (see `warmup_requests`) to `path` as TF Serving's
    warm-up file: a TFRecord of `PredictionLog` records.

    Raises:
        ValueError: more than `MAX_WARMUP_RECORDS` requests.
    """
    from tensorflow_serving.apis import predict_pb2, prediction_log_pb2

    if len(requests) > MAX_WARMUP_RECORDS:
        raise ValueError(
            f"TF Serving reads at most {MAX_WARMUP_RECORDS} warm-up records. "
            f"Received: {len(requests)} requests"
        )
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tf.io.TFRecordWriter(path) as writer:
        for name, inputs in requests:
            request = predict_pb2.PredictRequest()
            request.model_spec.signature_name = name
            for key, value in inputs.items():
                request.inputs[key].CopyFrom(tf.make_tensor_proto(value))
            log = prediction_log_pb2.PredictionLog(
                predict_log=prediction_log_pb2.PredictLog(request=request)
            )
            writer.write(log.SerializeToString())


def read_warmup_file(path):
    """The requests of a warm-up file: `[(signature_name, {name: array})]`."""
    from tensorflow_serving.apis import prediction_log_pb2

    requests = []
    for record in tf.data.TFRecordDataset(path).as_numpy_iterator():
        log = prediction_log_pb2.PredictionLog.FromString(record)
        request = log.predict_log.request
        inputs = {
            key: tf.make_ndarray(proto) for key, proto in sorted(request.inputs.items())
        }
        requests.append((request.model_spec.signature_name, inputs))
    return requests


def replay_warmup(loaded, export_dir):
    """Runs the warm-up requests of `export_dir` through `loaded` (the same
    export, from `tf.saved_model.load`), as TF Serving does when it loads a
    version. Returns the number of requests run (0 without a warm-up file)."""
    path = os.path.join(export_dir, WARMUP_PATH)
    if not os.path.exists(path):
        return 0
    requests = read_warmup_file(path)
    for name, inputs in requests:
        loaded.signatures[name](**{key: tf.constant(v) for key, v in inputs.items()})
    return len(requests)
