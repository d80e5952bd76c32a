"""Shared set-up of the SavedModel tests: one tiny translator, exported once.

`tiny_export` (session scope) trains a 500-piece SentencePiece model on the
bundled fixture corpus, builds a one-layer Transformer with random weights and
exports it with `export_translator` (default op check included). Test files
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


def tiny_translator():
    """`(model, tokenizer)`: a one-layer Transformer with random weights and
    a 500-piece SentencePiece model of the fixture corpus."""
    from keras_transformer import Transformer
    from pipelines import SentencePieceTokenizer

    keras.utils.set_random_seed(0)  # before the tokenizer (tensorflow-text quirk)
    with open(FIXTURE, encoding="utf-8") as file:
        texts = [side for line in file for side in line.rstrip("\n").split("\t")]
    # Byte fallback takes 256 ids: 500 is about the smallest vocabulary here.
    tokenizer = SentencePieceTokenizer.train(texts, vocab_size=500, num_threads=1)
    model = Transformer(
        source_vocab_size=tokenizer.vocab_size,
        num_layers=1,
        hidden_dim=16,
        intermediate_dim=32,
        num_heads=2,
        dropout=0.0,
        max_sequence_length=MAX_INPUT_LENGTH,
    )
    return model, tokenizer


@pytest.fixture(scope="session")
def tiny_export(tmp_path_factory):
    """`{"model", "model_proto", "fingerprint", "base", "path"}` of one export
    (`<base>/1`): beam 4, max_beam_size 4, max_extra_length 10 (limit 20)."""
    if keras.backend.backend() != "tensorflow":
        pytest.skip("SavedModel export needs the TensorFlow backend.")
    from savedmodels.export import export_translator

    model, tokenizer = tiny_translator()
    base = tmp_path_factory.mktemp("exports")
    path = export_translator(
        model,
        tokenizer,
        base,
        decoding=DecodingConfig(max_extra_length=10),
        max_beam_size=MAX_BEAM_SIZE,
        max_extra_length_limit=20,
        record={"averaged_steps": [1, 2]},
    )
    return {
        "model": model,
        "model_proto": tokenizer.model_proto,
        "fingerprint": tokenizer.fingerprint,
        "base": base,
        "path": path,
    }
