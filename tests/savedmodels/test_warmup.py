"""The export's TF Serving warm-up file (`assets.extra/tf_serving_warmup_requests`).

The tests with `tiny_export` skip themselves off the TensorFlow backend.
"""

import os

import numpy as np
import pytest
import tensorflow as tf

from pipelines import SentencePieceTokenizer
from savedmodels.translator_search import decoding_buffer_length
from savedmodels.warmup import (
    MAX_WARMUP_RECORDS,
    WARMUP_PATH,
    read_warmup_file,
    replay_warmup,
    write_warmup_file,
)
from tests.savedmodels.conftest import MAX_BEAM_SIZE

# Per signature and beam size (`translate` and `translate_ids` once per beam
# size, `serving_default` and each `translate_beam_K` once), then three
# single sentences (buffers 16, 32 and 44, see below).
PER_SIGNATURE = 1 + 3 * MAX_BEAM_SIZE
RECORDS = PER_SIGNATURE + 3


@pytest.fixture(autouse=True)
def _seed_and_policy():
    """Replaces tests/conftest.py's fixture of this name: nothing here is
    random, and seeding would make each test initialize the functions again."""
    yield


@pytest.fixture(scope="module")
def replayed(tiny_export):
    """The export loaded, then warmed up: `(loaded, number of requests run)`."""
    loaded = tf.saved_model.load(tiny_export["path"])
    return loaded, replay_warmup(loaded, tiny_export["path"])


def test_one_record_per_signature_and_beam_size_parsed_by_the_serving_protos(
    tiny_export, replayed
):
    from tensorflow_serving.apis import prediction_log_pb2

    path = os.path.join(tiny_export["path"], WARMUP_PATH)
    records = list(tf.data.TFRecordDataset(path).as_numpy_iterator())
    logs = [prediction_log_pb2.PredictionLog.FromString(r) for r in records]
    assert all(log.WhichOneof("log_type") == "predict_log" for log in logs)
    requests = read_warmup_file(path)
    assert len(requests) == len(logs) == RECORDS
    per_signature, single = requests[:PER_SIGNATURE], requests[-3:]
    seen = {(name, int(inputs.get("beam_size", 0))) for name, inputs in per_signature}
    beam_sizes = range(1, MAX_BEAM_SIZE + 1)
    assert seen == (
        {("serving_default", 0)}
        | {(name, k) for name in ("translate", "translate_ids") for k in beam_sizes}
        | {(f"translate_beam_{k}", 0) for k in beam_sizes}
    )
    loaded, _ = replayed
    for name, inputs in requests:
        # Exactly the inputs each signature takes, with their dtypes.
        _, specs = loaded.signatures[name].structured_input_signature
        assert set(inputs) == set(specs)
        for key, value in inputs.items():
            assert tf.as_dtype(value.dtype) == specs[key].dtype
    for _, inputs in per_signature:
        if "text" in inputs:
            # A sentence and an empty line: both code paths.
            assert inputs["text"].tolist() == [b"This is a warm-up request .", b""]
    # Then one sentence per buffer a single sentence can get: sources of
    # 2-24 positions (pieces truncated to 23, eos) + 10 extra are 12-34,
    # rounded up to multiples of 16 and capped at 24 + 20 = 44.
    tokenizer = SentencePieceTokenizer(tiny_export["model_proto"])
    buffers = []
    for name, inputs in single:
        assert name == "serving_default" and inputs["text"].shape == (1,)
        pieces = len(tokenizer.tokenize(inputs["text"]).to_list()[0])
        buffers.append(decoding_buffer_length(min(pieces, 23) + 1, 10, 44))
    assert buffers == [16, 32, 44]


def test_decoding_buffer_lengths_are_multiples_of_16_up_to_the_largest():
    cases = [
        # (longest source, extra length, largest buffer) -> buffer
        ((1, 0, 100), 16),
        ((16, 0, 100), 16),
        ((17, 0, 100), 32),
        ((7, 50, 100), 64),
        ((0, 0, 100), 1),  # an empty batch
        ((60, 50, 100), 100),
        ((3, 2, 4), 4),
    ]
    for (source, extra, largest), expected in cases:
        assert decoding_buffer_length(source, extra, largest) == expected
        tensor = decoding_buffer_length(
            tf.constant(source), tf.constant(extra), largest
        )
        assert int(tensor) == expected


def test_replay_runs_every_request_and_the_outputs_stay_the_same(tiny_export, replayed):
    warm, count = replayed
    assert count == RECORDS
    texts = tf.constant(["The Schedule Library", ""])
    cold = tf.saved_model.load(tiny_export["path"])  # not replayed
    before = cold.signatures["serving_default"](text=texts)
    after = warm.signatures["serving_default"](text=texts)
    np.testing.assert_array_equal(before["translations"], after["translations"])
    np.testing.assert_allclose(before["scores"], after["scores"], atol=1e-6)


def test_records_are_requests_the_grpc_prediction_service_answers(
    tiny_export, replayed
):
    """TF Serving's PredictionService accepts the records as they are: the
    loopback stand-in answers the first record of each signature (all of
    them are parsed above) with that signature's outputs."""
    import grpc
    from tensorflow_serving.apis import prediction_log_pb2, prediction_service_pb2_grpc

    from tests.savedmodels.serving_stand_ins import start_grpc

    path = os.path.join(tiny_export["path"], WARMUP_PATH)
    server, _, address = start_grpc({"ende": replayed[0]})
    try:
        stub = prediction_service_pb2_grpc.PredictionServiceStub(
            grpc.insecure_channel(address)
        )
        answered = set()
        for record in tf.data.TFRecordDataset(path).as_numpy_iterator():
            log = prediction_log_pb2.PredictionLog.FromString(record)
            request = log.predict_log.request
            if request.model_spec.signature_name in answered:
                continue
            request.model_spec.name = "ende"
            response = stub.Predict(request, timeout=120)
            outputs = {"ids", "scores"}
            if request.model_spec.signature_name != "translate_ids":
                outputs = {"translations", "scores"}
            assert set(response.outputs) == outputs
            answered.add(request.model_spec.signature_name)
        assert answered == {"serving_default", "translate", "translate_ids"} | {
            f"translate_beam_{k}" for k in range(1, MAX_BEAM_SIZE + 1)
        }
    finally:
        server.stop(None)


def test_no_replay_without_a_file(tmp_path):
    assert replay_warmup(None, str(tmp_path)) == 0


def test_too_many_records_are_refused(tmp_path):
    requests = [("serving_default", {"text": np.array([b"x"], dtype=object)})]
    with pytest.raises(ValueError, match="Received: 1001 requests"):
        write_warmup_file(requests * (MAX_WARMUP_RECORDS + 1), str(tmp_path / "w"))
    assert not (tmp_path / "w").exists()
