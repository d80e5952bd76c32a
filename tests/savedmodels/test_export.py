"""Exported translator: export, reload in a fresh process without this
repository, and compare every signature with in-process `translate`.

One export and one subprocess serve the whole file (module fixture); the
subprocess runs every request and returns the outputs as a `.npz` file.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from keras_transformer import Transformer
from keras_transformer.decoding.decoding_config import DecodingConfig
from keras_transformer.decoding.translate import translate
from pipelines import EOS_ID, PAD_ID, SentencePieceTokenizer
from savedmodels.export import RECORD_PATH, _next_version, export_translator
from savedmodels.translator_module import TranslatorModule
from tests.markers import tensorflow_only
from tests.savedmodels.conftest import (
    MAX_BEAM_SIZE,
    MAX_INPUT_LENGTH,
    REPO,
    fixture_sources,
)

pytestmark = tensorflow_only("SavedModel export needs the TensorFlow backend.")

INVALID_UTF8 = b"Hallo \xff\xfe Welt \xc3("
LONG_LINE = ("The schedule library sets an object. " * 300)[:10_000]
TEXT_BYTES = [
    b"The Schedule Library",
    b"Sets an object reference on a variable.",
    b"",
    b" \t ",
    LONG_LINE.encode(),
    INVALID_UTF8,
    INVALID_UTF8.decode("utf-8", errors="replace").encode(),
    b"Hello world.",
]
# What the export reads: invalid UTF-8 replaced by U+FFFD, as Python does.
TEXTS = [t.decode("utf-8", errors="replace") for t in TEXT_BYTES]
EMPTY_ROWS = (2, 3)
SIGNATURES = [
    "serving_default",
    "translate",
    "translate_ids",
    *(f"translate_beam_{k}" for k in range(1, MAX_BEAM_SIZE + 1)),
]

# Runs with `cwd` a temporary directory and no PYTHONPATH; it also drops the
# editable-install hooks and the repository root from the path (the venv may
# live inside the repository, so only the root itself) and blocks our
# packages, then checks that they cannot be imported.
LOADER = textwrap.dedent(
    """
    import importlib.abc, importlib.util, sys
    repo, export_dir, out_path = sys.argv[1:4]
    sys.meta_path[:] = [f for f in sys.meta_path
                        if "__editable__" not in getattr(f, "__module__", "")]
    sys.path[:] = [p for p in sys.path if p and p.rstrip("/") != repo]
    OURS = ("keras_transformer", "pipelines", "savedmodels")

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in OURS:
                raise ModuleNotFoundError(name)

    sys.meta_path.insert(0, Block())
    for name in OURS:
        try:
            __import__(name)
            raise SystemExit(f"{name} is importable")
        except ModuleNotFoundError:
            pass
    import numpy as np
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the SentencePiece ops)

    texts = tf.constant(%(texts)r)
    loaded = tf.saved_model.load(export_dir)
    sig = loaded.signatures
    out = {}

    def keep(prefix, result):
        for key, value in result.items():
            value = value.numpy()
            is_text = value.dtype == object
            out[f"{prefix}/{key}"] = value.astype("S") if is_text else value

    def request(beam_size, alpha, max_extra_length, n_best):
        return dict(beam_size=tf.constant(beam_size, tf.int32),
                    alpha=tf.constant(alpha, tf.float32),
                    max_extra_length=tf.constant(max_extra_length, tf.int32),
                    n_best=tf.constant(n_best, tf.int32))

    keep("default", sig["serving_default"](text=texts))
    keep("empty_batch", sig["serving_default"](text=tf.constant([], tf.string)))
    keep("batch64", sig["serving_default"](text=tf.constant(%(batch64)r)))
    keep("translate", sig["translate"](text=texts, **request(3, 1.0, 7, 2)))
    keep("translate_k1", sig["translate"](text=texts, **request(1, 0.0, 5, 1)))
    keep("ids", sig["translate_ids"](
        source_ids=tf.constant(%(source_ids)r, tf.int32), **request(4, 0.6, 9, 4)))

    def at_beam(beam_size, *scalars):
        scalars = request(beam_size, *scalars)
        del scalars["beam_size"]
        return sig[f"translate_beam_{beam_size}"](text=texts, **scalars)

    keep("beam3", at_beam(3, 1.0, 7, 2))
    keep("beam1", at_beam(1, 0.0, 5, 1))
    errors = []
    bad_requests = [(4, 0.6, 5, 5), (MAX + 1, 0.6, 5, 1), (2, -1.0, 5, 1),
                    (2, 0.6, 10_000, 1)]
    for name, bad in [("translate", b) for b in bad_requests] + [
            ("translate_beam_2", b) for b in [(2, 0.6, 5, 3), *bad_requests[2:]]]:
        scalars = request(*bad)
        if name != "translate":
            del scalars["beam_size"]
        try:
            sig[name](text=texts[:1], **scalars)
            errors.append("no error")
        except tf.errors.InvalidArgumentError as error:
            errors.append(error.message[:4000])
    out["errors"] = np.array(errors, dtype="S")
    # The search loops each signature's graph holds (and its first call
    # prepares): the functions its library names `...while_body...`.
    out["loops"] = np.array([
        sum("while_body" in f.signature.name
            for f in sig[name].graph.as_graph_def().library.function)
        for name in %(names)r])
    # The text ends, shared by the signatures as the searches are: one
    # function each in the whole library.
    library = {f.signature.name for name in sig
               for f in sig[name].graph.as_graph_def().library.function}
    out["text_ends"] = np.array([
        sum(f"_{end}_" in name for name in library)
        for end in ("text_to_ids", "detokenized")])
    out["imported"] = np.array(
        [m for m in sys.modules if m.split(".")[0] in OURS] or [""], dtype="S")
    np.savez(out_path, **out)
    """
)


def _source_ids(tokenizer, texts):
    """In-process preprocessing, as the export does it: pieces truncated to
    `MAX_INPUT_LENGTH - 1`, eos, padding."""
    pieces = tokenizer.tokenize(texts).to_list()
    rows = [p[: MAX_INPUT_LENGTH - 1] + [EOS_ID] for p in pieces]
    width = max(len(r) for r in rows)
    return np.array([r + [PAD_ID] * (width - len(r)) for r in rows], "int32")


@pytest.fixture(scope="module")
def exported(tiny_export, tmp_path_factory):
    # The shared export (tests/savedmodels/conftest.py): beam 4, max_beam_size
    # 4, max_extra_length 10 (limit 20), record {"averaged_steps": [1, 2]}.
    tokenizer = SentencePieceTokenizer(tiny_export["model_proto"])
    path = tiny_export["path"]
    source_ids = _source_ids(tokenizer, TEXTS[:2] + TEXTS[7:])
    script = tmp_path_factory.mktemp("loader") / "load.py"
    script.write_text(
        LOADER.replace("MAX + 1", str(MAX_BEAM_SIZE + 1))
        % {
            "texts": TEXT_BYTES,
            "batch64": fixture_sources(64),
            "source_ids": source_ids.tolist(),
            "names": SIGNATURES,
        }
    )
    out_path = script.parent / "out.npz"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, str(script), REPO, path, str(out_path)],
        cwd=script.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    with np.load(out_path) as outputs:
        outputs = dict(outputs)
    return {**tiny_export, "source_ids": source_ids, "outputs": outputs}


def _reference(exported, source_ids, beam_size, alpha, max_extra_length, n_best):
    ids, scores = translate(
        exported["model"],
        source_ids,
        DecodingConfig(
            beam_size=beam_size, alpha=alpha, max_extra_length=max_extra_length
        ),
    )
    return np.array(ids)[:, :n_best], np.array(scores)[:, :n_best]


def _assert_same(ids, scores, expected_ids, expected_scores):
    width = ids.shape[-1]
    assert ids.shape[:2] == expected_ids.shape[:2]
    np.testing.assert_array_equal(ids, expected_ids[:, :, :width])
    assert np.all(expected_ids[:, :, width:] == PAD_ID)
    np.testing.assert_allclose(scores, expected_scores, atol=1e-5, rtol=1e-6)


def _check_text_signature(exported, prefix, beam_size, alpha, extra, n_best):
    tokenizer = SentencePieceTokenizer(exported["model_proto"])
    outputs = exported["outputs"]
    texts = TEXTS
    source_ids = _source_ids(tokenizer, texts)
    ids, scores = _reference(exported, source_ids, beam_size, alpha, extra, n_best)
    translations = outputs[f"{prefix}/translations"]
    assert translations.shape == (len(texts), n_best)
    for row in range(len(texts)):
        if row in EMPTY_ROWS:
            assert list(translations[row]) == [b""] * n_best
            np.testing.assert_array_equal(outputs[f"{prefix}/scores"][row], 0.0)
            continue
        expected = np.array(tokenizer.detokenize(ids[row])).astype("S")
        np.testing.assert_array_equal(translations[row], expected)
        np.testing.assert_allclose(
            outputs[f"{prefix}/scores"][row], scores[row], atol=1e-5, rtol=1e-6
        )


def test_serving_default_matches_in_process_translate(exported):
    _check_text_signature(exported, "default", 4, 0.6, 10, 1)


def test_translate_with_per_request_parameters(exported):
    _check_text_signature(exported, "translate", 3, 1.0, 7, 2)
    _check_text_signature(exported, "translate_k1", 1, 0.0, 5, 1)


def test_translate_ids_matches_in_process_translate(exported):
    outputs = exported["outputs"]
    expected = _reference(exported, exported["source_ids"], 4, 0.6, 9, 4)
    _assert_same(outputs["ids/ids"], outputs["ids/scores"], *expected)


def test_empty_and_whitespace_give_empty_translations(exported):
    for row in EMPTY_ROWS:
        assert list(exported["outputs"]["default/translations"][row]) == [b""]
        assert exported["outputs"]["default/scores"][row, 0] == 0.0


def test_long_line_is_truncated(exported):
    tokenizer = SentencePieceTokenizer(exported["model_proto"])
    assert len(LONG_LINE) == 10_000
    assert len(tokenizer.tokenize([LONG_LINE]).to_list()[0]) > MAX_INPUT_LENGTH
    # The comparison with in-process translate on the truncated ids is part
    # of the signature tests; here: it gives a non-empty translation.
    assert exported["outputs"]["default/translations"][4, 0] != b""


def test_invalid_utf8_is_replaced_with_u_fffd(exported):
    outputs = exported["outputs"]
    for prefix in ("default", "translate", "translate_k1", "beam3", "beam1"):
        np.testing.assert_array_equal(
            outputs[f"{prefix}/translations"][5], outputs[f"{prefix}/translations"][6]
        )
        np.testing.assert_array_equal(
            outputs[f"{prefix}/scores"][5], outputs[f"{prefix}/scores"][6]
        )


def test_batches_of_0_and_64(exported):
    outputs = exported["outputs"]
    assert outputs["empty_batch/translations"].shape == (0, 1)
    assert outputs["empty_batch/scores"].shape == (0, 1)
    texts = fixture_sources(64)
    tokenizer = SentencePieceTokenizer(exported["model_proto"])
    ids, scores = _reference(exported, _source_ids(tokenizer, texts), 4, 0.6, 10, 1)
    expected = np.array(tokenizer.detokenize(ids[:, 0])).astype("S")
    np.testing.assert_array_equal(outputs["batch64/translations"][:, 0], expected)
    np.testing.assert_allclose(outputs["batch64/scores"], scores, atol=1e-5, rtol=1e-6)


def test_bad_requests_fail_with_clear_errors(exported):
    errors = [e.decode() for e in exported["outputs"]["errors"]]
    assert "n_best must be <= beam_size" in errors[0]
    assert f"max_beam_size={MAX_BEAM_SIZE}" in errors[1]
    assert "alpha must be >= 0" in errors[2]
    assert "max_extra_length_limit=20" in errors[3]
    # The signature of one beam size checks what it takes in the same way.
    assert "n_best must be <= beam_size" in errors[4]
    assert "alpha must be >= 0" in errors[5]
    assert "max_extra_length_limit=20" in errors[6]


def test_signatures_at_one_beam_size_equal_translate_at_that_size(exported):
    """`translate_beam_K` is `translate` with `beam_size` K (the reference
    is in-process `translate`, as for `translate`)."""
    _check_text_signature(exported, "beam3", 3, 1.0, 7, 2)
    _check_text_signature(exported, "beam1", 1, 0.0, 5, 1)


def test_only_the_switch_signatures_hold_every_beam_sizes_search(exported):
    """A signature's first call after loading prepares every search its
    graph holds: `translate` and `translate_ids` one per beam size,
    `serving_default` and each `translate_beam_K` one (the searches are
    shared functions, stored once in the SavedModel)."""
    loops = dict(zip(SIGNATURES, exported["outputs"]["loops"].tolist(), strict=True))
    assert loops == {
        "serving_default": 1,
        "translate": MAX_BEAM_SIZE,
        "translate_ids": MAX_BEAM_SIZE,
        **{f"translate_beam_{k}": 1 for k in range(1, MAX_BEAM_SIZE + 1)},
    }
    # Text to ids and ids to text: one function each, whichever signature.
    assert exported["outputs"]["text_ends"].tolist() == [1, 1]


def test_loading_needs_neither_this_repository_nor_keras_transformer(exported):
    assert list(exported["outputs"]["imported"]) == [b""]


def test_layout_and_record(exported):
    assert os.path.basename(exported["path"]) == "1"
    assert os.path.exists(os.path.join(exported["path"], "saved_model.pb"))
    assert sorted(os.listdir(exported["base"])) == ["1"]  # no staging left
    with open(os.path.join(exported["path"], RECORD_PATH)) as file:
        record = json.load(file)
    assert record["model_config"] == exported["model"].get_config()
    assert record["tokenizer"]["fingerprint"] == exported["fingerprint"]
    assert record["decoding"]["beam_size"] == 4
    assert record["decoding"]["alpha"] == 0.6
    assert record["decoding"]["n_best"] == 1
    assert record["decoding"]["max_input_length"] == MAX_INPUT_LENGTH
    assert record["record"] == {"averaged_steps": [1, 2]}


def test_refuses_to_overwrite_an_existing_version(exported):
    tokenizer = SentencePieceTokenizer(exported["model_proto"])
    saved = os.path.join(exported["path"], "saved_model.pb")
    before = os.path.getmtime(saved)
    with pytest.raises(ValueError, match="overwrite an existing version"):
        export_translator(exported["model"], tokenizer, exported["base"], version=1)
    assert os.path.getmtime(saved) == before


def test_next_version(tmp_path):
    assert _next_version(str(tmp_path / "missing")) == 1
    for name in ("1", "7", ".8-staging", "notes"):
        (tmp_path / name).mkdir()
    assert _next_version(str(tmp_path)) == 8


def test_constructor_validates_arguments(exported):
    tokenizer = SentencePieceTokenizer(exported["model_proto"])
    model = exported["model"]
    # A bad n_best or alpha cannot reach the module: DecodingConfig refuses
    # it (tests/keras_transformer/decoding/test_decoding_config.py).
    with pytest.raises(ValueError, match="beam_size=9, max_beam_size=8"):
        TranslatorModule(model, tokenizer, DecodingConfig(beam_size=9))
    with pytest.raises(ValueError, match="max_extra_length_limit=20"):
        TranslatorModule(
            model,
            tokenizer,
            DecodingConfig(max_extra_length=30),
            max_extra_length_limit=20,
        )
    with pytest.raises(ValueError, match="method='greedy'"):
        TranslatorModule(model, tokenizer, DecodingConfig(method="greedy"))
    other = Transformer(
        source_vocab_size=50,
        num_layers=1,
        hidden_dim=8,
        intermediate_dim=8,
        num_heads=2,
    )
    with pytest.raises(ValueError, match="tokenizer.vocab_size=500"):
        TranslatorModule(other, tokenizer)
    with pytest.raises(ValueError, match="version=0"):
        export_translator(model, tokenizer, exported["base"], version=0)


def test_each_search_is_traced_once_and_only_the_signatures_are_saved(
    tmp_path, monkeypatch
):
    """`tf.saved_model.save` would trace a module's `tf.function`s again in
    its save context and store them beside the signatures; the export keeps
    the signatures only (`_keep_only_signatures`)."""
    import tensorflow as tf

    import savedmodels.translator_search as translator_search
    from tests.savedmodels.conftest import tiny_translator

    traced = []

    def counting_translate(*args, **kwargs):
        traced.append(kwargs.get("config", args[2] if len(args) > 2 else None))
        return translate(*args, **kwargs)

    monkeypatch.setattr(translator_search, "translate", counting_translate)
    model, tokenizer = tiny_translator()
    path = export_translator(
        model,
        tokenizer,
        tmp_path,
        decoding=DecodingConfig(beam_size=2, max_extra_length=5),
        max_beam_size=2,
        max_extra_length_limit=10,
        serving_tf_text_version=None,
    )
    # One search per beam size (1 and 2), shared by the five signatures.
    assert len(traced) == 2
    loaded = tf.saved_model.load(path)
    assert sorted(loaded.signatures) == [
        "serving_default",
        "translate",
        "translate_beam_1",
        "translate_beam_2",
        "translate_ids",
    ]
    assert not hasattr(loaded, "translate_ids")
    outputs = loaded.signatures["translate"](
        text=tf.constant(["Hello world.", ""]),
        beam_size=tf.constant(2),
        alpha=tf.constant(0.6),
        max_extra_length=tf.constant(5),
        n_best=tf.constant(2),
    )
    assert outputs["translations"].shape == (2, 2)
    assert outputs["translations"][1, 0].numpy() == b""
