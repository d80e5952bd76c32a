"""Shared set-up of the SavedModel tests: one tiny translator, exported once.

`tiny_export` (session scope) trains a 500-piece SentencePiece model on the
bundled fixture corpus, builds a one-layer Transformer with random weights and
exports it with `export_translator` (default op check included), once per test
run: the pytest-xdist workers share it (`tests/shared_build.py`). Test files
that need an export share it; none writes into its `base` directory.

Hold on to `model_proto`, not a tokenizer object: `keras.utils.set_random_seed`
(run before every test) invalidates tokenizers built earlier (see
`pipelines.SentencePieceTokenizer`); rebuild one with
`SentencePieceTokenizer(tiny_export["model_proto"])`.
"""

import os

import keras
import pytest

from keras_transformer.decoding.decoding_config import DecodingConfig

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(REPO, "pipelines", "data", "fixture", "en-de.tsv")
MAX_INPUT_LENGTH = 24  # the model's max_sequence_length: truncation is cheap
MAX_BEAM_SIZE = 4


def fixture_sources(count=64):
    """The first `count` English sentences of the fixture corpus."""
    with open(FIXTURE, encoding="utf-8") as file:
        return [line.split("\t")[0] for line in file][:count]


def tiny_model(vocab_size):
    """A one-layer Transformer with random weights (the caller seeds)."""
    from keras_transformer import Transformer

    return Transformer(
        source_vocab_size=vocab_size,
        num_layers=1,
        hidden_dim=16,
        intermediate_dim=32,
        num_heads=2,
        dropout=0.0,
        max_sequence_length=MAX_INPUT_LENGTH,
        # One name on every worker, whichever built the export (Keras numbers
        # a second default name "transformer_1").
        name="tiny_translator",
    )


def tiny_translator():
    """`(model, tokenizer)`: a one-layer Transformer with random weights and
    a 500-piece SentencePiece model of the fixture corpus."""
    from pipelines import SentencePieceTokenizer

    keras.utils.set_random_seed(0)  # before the tokenizer (tensorflow-text quirk)
    with open(FIXTURE, encoding="utf-8") as file:
        texts = [side for line in file for side in line.rstrip("\n").split("\t")]
    # Byte fallback takes 256 ids: 500 is about the smallest vocabulary here.
    tokenizer = SentencePieceTokenizer.train(texts, vocab_size=500, num_threads=1)
    return tiny_model(tokenizer.vocab_size), tokenizer


def _build_export(folder):
    """Exports the tiny translator under `folder/exports` and keeps what
    `tiny_export` rebuilds it from: `tokenizer.model`, `model.weights.h5`."""
    from savedmodels.export import export_translator

    model, tokenizer = tiny_translator()
    path = export_translator(
        model,
        tokenizer,
        folder / "exports",
        decoding=DecodingConfig(max_extra_length=10),
        max_beam_size=MAX_BEAM_SIZE,
        max_extra_length_limit=20,
        record={"averaged_steps": [1, 2]},
    )
    assert os.fspath(path) == os.fspath(folder / "exports" / "1"), path
    (folder / "tokenizer.model").write_bytes(tokenizer.model_proto)
    model.save_weights(str(folder / "model.weights.h5"))


@pytest.fixture(scope="session")
def tiny_export(tmp_path_factory):
    """`{"model", "model_proto", "fingerprint", "base", "path"}` of one export
    (`<base>/1`): beam 4, max_beam_size 4, max_extra_length 10 (limit 20).

    Built once per test run (`tests/shared_build.py`): every worker loads the
    exported weights into a model of its own, so the in-process reference is
    the exported model on each."""
    if keras.backend.backend() != "tensorflow":
        pytest.skip("SavedModel export needs the TensorFlow backend.")
    from pipelines import SentencePieceTokenizer
    from tests.shared_build import build_once

    folder = build_once(tmp_path_factory, "tiny_export", _build_export)
    tokenizer = SentencePieceTokenizer((folder / "tokenizer.model").read_bytes())
    model = tiny_model(tokenizer.vocab_size)
    model.load_weights(str(folder / "model.weights.h5"))
    base = folder / "exports"
    return {
        "model": model,
        "model_proto": tokenizer.model_proto,
        "fingerprint": tokenizer.fingerprint,
        "base": base,
        "path": str(base / "1"),
    }
