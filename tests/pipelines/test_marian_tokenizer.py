"""`MarianTokenizer` against Hugging Face's `MarianTokenizer` (the reference),
on the bundled corpus' test sentences, unknown characters and a language
code included; the id layout; the artefact round trip; bad files."""

import importlib.util
import json
import os

import pytest
import tensorflow as tf

from pipelines import MarianTokenizer, load_tokenizer, marian_vocabulary
from tests.marian_reference import (
    LANGUAGE_CODE,
    sample_sentences,
    sample_targets,
    shared_reference,
)

needs_reference = pytest.mark.skipif(
    not all(importlib.util.find_spec(n) for n in ("torch", "transformers")),
    reason="the reference needs torch and transformers",
)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """`(folder, reference outputs)`, made once per test run in a process
    of their own (`tests/marian_reference.py`)."""
    return shared_reference(tmp_path_factory)


def _ours(folder):
    config = json.load(open(os.path.join(folder, "config.json")))
    vocab = json.load(open(os.path.join(folder, "vocab.json")))
    ours = MarianTokenizer.from_files(
        *(os.path.join(folder, n) for n in ("source.spm", "target.spm", "vocab.json")),
        pad_id=config["pad_token_id"],
        eos_id=config["eos_token_id"],
    )
    _, marian_ids = marian_vocabulary(
        vocab, config["pad_token_id"], config["eos_token_id"]
    )
    return ours, marian_ids


def test_marian_vocabulary_puts_the_special_pieces_first():
    vocab = {"</s>": 0, "<unk>": 1, "a": 2, "b": 3, "<pad>": 4}
    pieces, marian_ids = marian_vocabulary(vocab, pad_id=4, eos_id=0)
    assert pieces == ["<pad>", "<unk>", "<s>", "</s>", "a", "b"]
    assert marian_ids == [4, 1, 4, 0, 2, 3]


@pytest.mark.parametrize(
    "vocab, pad_id, match",
    [
        ({"</s>": 0, "<unk>": 2, "<pad>": 3}, 3, "each id 0..V-1"),
        ({"</s>": 0, "x": 1, "<pad>": 2}, 2, "no '<unk>'"),
        ({"</s>": 0, "<unk>": 1, "<pad>": 2}, 7, "pad_token_id=7"),
        ({"</s>": 0, "<unk>": 1, "<pad>": 2}, 0, "must differ"),
    ],
)
def test_a_bad_vocabulary_is_named(vocab, pad_id, match):
    with pytest.raises(ValueError, match=match):
        marian_vocabulary(vocab, pad_id=pad_id, eos_id=0)


@needs_reference
def test_ids_equal_the_reference_tokenizers(reference):
    folder, outputs = reference
    ours, marian_ids = _ours(folder)
    sentences = sample_sentences()
    assert any(s.startswith(LANGUAGE_CODE) for s in sentences)
    ids = ours.tokenize(sentences).to_list()
    # `encode_sources` appends eos (Marian's 0) as the reference does.
    assert [[marian_ids[i] for i in row] + [0] for row in ids] == outputs["input_ids"]
    # characters the models never saw are exercised
    assert any(outputs["unk_id"] in row for row in outputs["input_ids"])
    assert ours.tokenize(sentences[-2]).numpy().tolist() == ids[-2]  # a scalar


@needs_reference
def test_the_target_side_splits_training_targets_as_the_reference(reference):
    folder, outputs = reference
    ours, marian_ids = _ours(folder)
    targets = ours.target_side()
    ids = targets.tokenize(sample_targets()).to_list()
    # `text_target=` splits with target.spm and appends eos (Marian's 0).
    assert [[marian_ids[i] for i in row] + [0] for row in ids] == outputs["target_ids"]
    # ... which splits German unlike source.spm; the artefact is the same.
    assert ids != ours.tokenize(sample_targets()).to_list()
    assert targets.fingerprint == ours.fingerprint
    files = ours.asset_files()
    with pytest.raises(ValueError, match="side='both'"):
        MarianTokenizer(
            files["source.spm"], files["target.spm"], ours.vocabulary, side="both"
        )


@needs_reference
def test_detokenize_equals_the_reference_decode(reference):
    folder, outputs = reference
    ours, marian_ids = _ours(folder)
    ours_of = {marian: i for i, marian in enumerate(marian_ids) if i != 2}
    rows = [[ours_of[i] for i in row] for row in outputs["decode_rows"]]
    texts = ours.detokenize(tf.ragged.constant(rows, dtype="int32"))
    assert [t.decode() for t in texts.numpy()] == outputs["decoded"]


@needs_reference
def test_the_artefact_round_trips(reference, tmp_path):
    ours, _ = _ours(reference[0])
    path = tmp_path / "tokenizer.model"
    assert ours.save(path) == ours.fingerprint
    loaded = load_tokenizer(path)
    assert isinstance(loaded, MarianTokenizer)
    assert loaded.fingerprint == ours.fingerprint
    sentences = sample_sentences(10)
    assert loaded.tokenize(sentences).to_list() == ours.tokenize(sentences).to_list()
    assert sorted(loaded.asset_files()) == ["source.spm", "target.spm", "vocab.json"]


def test_it_cannot_be_trained():
    with pytest.raises(ValueError, match="cannot be trained"):
        MarianTokenizer.train(["a b"], vocab_size=100)


@needs_reference
def test_a_file_that_is_not_sentencepiece_is_named(reference):
    ours, _ = _ours(reference[0])
    with pytest.raises(ValueError, match="source_spm is not a SentencePiece model"):
        MarianTokenizer(
            b"not a model", ours.asset_files()["target.spm"], ours.vocabulary
        )
