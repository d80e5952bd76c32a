"""`check_serving_ops`: the real export passes; unknown ops, tensorflow-text
ops outside the table and a too-old tensorflow-text target fail with messages
naming the op and where it is used; a failed check publishes no version."""

import os

import pytest
import tensorflow as tf

from keras_transformer.decoding.decoding_config import DecodingConfig
from pipelines import SentencePieceTokenizer
from savedmodels.export import export_translator
from savedmodels.op_compatibility import (
    TF_TEXT_OPS,
    _registries,
    check_serving_ops,
)
from tests.markers import tensorflow_only

pytestmark = tensorflow_only("SavedModel export needs the TensorFlow backend.")

FAKE_OP = "KerasTransformerTest>FakeOp"


def _save_tiny(path, fn):
    """Saves a module whose `serving_default` is `fn` (one string or float
    vector in)."""
    module = tf.Module()
    module.f = fn
    tf.saved_model.save(module, str(path), signatures={"serving_default": fn})
    return str(path)


def _rename_op(saved_model_dir, old, new):
    """Renames every node of op `old` in the library functions to `new`."""
    from tensorflow.core.protobuf import saved_model_pb2

    path = os.path.join(saved_model_dir, "saved_model.pb")
    saved_model = saved_model_pb2.SavedModel()
    with open(path, "rb") as file:
        saved_model.ParseFromString(file.read())
    renamed = 0
    for function in saved_model.meta_graphs[0].graph_def.library.function:
        for node in function.node_def:
            if node.op == old:
                node.op = new
                renamed += 1
    assert renamed
    with open(path, "wb") as file:
        file.write(saved_model.SerializeToString())


def test_the_real_export_passes(tiny_export):
    # export_translator already ran the check (default target 2.20).
    ops = check_serving_ops(tiny_export["path"])
    assert ops == sorted(ops)
    for op in (
        "SentencepieceOp",
        "SentencepieceTokenizeOp",
        "SentencepieceDetokenizeOp",
    ):
        assert op in ops
    core = set(_registries()["core"])
    assert all(op in core or op in TF_TEXT_OPS for op in ops)
    assert "XlaDynamicUpdateSlice" in ops and "XlaDynamicUpdateSlice" in core


def test_the_table_matches_the_installed_tensorflow_text():
    registry = _registries()
    assert set(TF_TEXT_OPS) <= set(registry["tf_text"])
    assert not set(TF_TEXT_OPS) & set(registry["core"])


def test_an_unregistered_op_is_named_with_where_it_is_used(tmp_path):
    fn = tf.function(
        lambda x: {"y": x + 1.0},
        input_signature=[tf.TensorSpec([None], tf.float32, name="x")],
    )
    path = _save_tiny(tmp_path / "fake", fn)
    _rename_op(path, "AddV2", FAKE_OP)
    with pytest.raises(ValueError) as error:
        check_serving_ops(path)
    message = str(error.value)
    assert f"- {FAKE_OP}: registered neither by TensorFlow" in message
    assert "function '__inference_" in message
    assert "signatures: serving_default" in message
    assert "tf_text_version=2.20" in message
    assert "AddV2" not in message


def test_a_tensorflow_text_op_outside_the_table_is_refused(tmp_path):
    import tensorflow_text

    tokenizer = tensorflow_text.WhitespaceTokenizer()
    fn = tf.function(
        lambda text: {"words": tokenizer.tokenize(text).flat_values},
        input_signature=[tf.TensorSpec([None], tf.string, name="text")],
    )
    path = _save_tiny(tmp_path / "whitespace", fn)
    with pytest.raises(ValueError, match="not in TF_TEXT_OPS") as error:
        check_serving_ops(path)
    assert "TFText>WhitespaceTokenizeWithOffsetsV2" in str(error.value)


def test_the_target_tensorflow_text_release(tiny_export):
    path = tiny_export["path"]
    with pytest.raises(ValueError, match="after the target 1.15") as error:
        check_serving_ops(path, tf_text_version="1.15")
    assert "- SentencepieceOp: " in str(error.value)
    assert "signatures: serving_default, translate" in str(error.value)
    check_serving_ops(path, tf_text_version="2.0.1")  # the patch part is ignored


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="Received: tf_text_version='latest'"):
        check_serving_ops(tmp_path, tf_text_version="latest")
    with pytest.raises(ValueError, match="No saved_model.pb"):
        check_serving_ops(tmp_path)


def test_a_failed_check_publishes_no_version(tiny_export, tmp_path):
    tokenizer = SentencePieceTokenizer(tiny_export["model_proto"])
    base = tmp_path / "ende"
    with pytest.raises(ValueError, match="tf_text_version=.2.x."):
        export_translator(
            tiny_export["model"], tokenizer, base, serving_tf_text_version="2.x"
        )
    assert not base.exists()  # refused before the export
    with pytest.raises(ValueError, match="- SentencepieceOp: .* after the target 1.15"):
        export_translator(
            tiny_export["model"],
            tokenizer,
            base,
            decoding=DecodingConfig(beam_size=1, max_extra_length=2),
            max_beam_size=1,
            serving_tf_text_version="1.15",
        )
    assert os.listdir(base) == []  # neither a version nor the staging directory


@pytest.fixture
def fresh_registry(monkeypatch, tmp_path):
    """`_registries` with its in-process memo cleared before and after, the
    cache folder in `tmp_path` and the subprocess replaced by a counter:
    `(calls, registry)`. Clearing after keeps this fake out of later tests."""
    import json
    import subprocess

    registry = {
        "tensorflow": "9.9.9",
        "core": ["AddV2"],
        "tensorflow_text": None,
        "tf_text": [],
    }
    calls = []

    def run(argv, **kwargs):
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 0, json.dumps(registry) + "\n", "")

    monkeypatch.setenv("KERAS_TRANSFORMER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("savedmodels.op_compatibility.subprocess.run", run)
    _registries.cache_clear()
    yield calls, registry
    _registries.cache_clear()


def test_the_registry_is_read_once_per_installation(fresh_registry, tmp_path):
    calls, registry = fresh_registry
    assert _registries() == registry
    (written,) = (tmp_path / "cache").iterdir()
    assert written.name.startswith("op-registry-") and written.suffix == ".json"
    _registries.cache_clear()  # as a new process starts
    assert _registries() == registry
    assert len(calls) == 1
    # A damaged file is read again from TensorFlow, then replaced.
    for damage in ("{not json", '{"core": []}'):
        written.write_text(damage)
        _registries.cache_clear()
        assert _registries() == registry
    assert len(calls) == 3
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [written.name]


def test_another_installation_reads_the_registry_again(
    fresh_registry, tmp_path, monkeypatch
):
    calls, _ = fresh_registry
    _registries()
    monkeypatch.setattr("sys.version", "another interpreter")
    _registries.cache_clear()
    _registries()
    assert len(calls) == 2
    assert len(list((tmp_path / "cache").iterdir())) == 2


def test_an_empty_cache_setting_writes_nothing(fresh_registry, monkeypatch):
    calls, registry = fresh_registry
    monkeypatch.setenv("KERAS_TRANSFORMER_CACHE", "")
    for _ in range(2):
        _registries.cache_clear()
        assert _registries() == registry
    assert len(calls) == 2
