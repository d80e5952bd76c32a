import unicodedata

import numpy as np
import pytest
import tensorflow as tf

from pipelines import (
    EOS_ID,
    PAD_ID,
    SentencePieceTokenizer,
    load_bundled,
    load_tokenizer,
    sample_texts,
)


def _normalised(text):
    return unicodedata.normalize("NFKC", " ".join(text.split()))


def test_train_is_deterministic(fixture_texts, sp_tokenizer):
    again = SentencePieceTokenizer.train(fixture_texts, vocab_size=1000, num_threads=2)
    assert again.fingerprint == sp_tokenizer.fingerprint
    assert sp_tokenizer.fingerprint.startswith("sha256:")
    assert 300 < sp_tokenizer.vocab_size <= 1000


def test_round_trip_on_corpus_sample(sp_tokenizer, fixture_texts):
    # The fixture (training texts) and unseen dev text (byte fallback).
    dev = sample_texts(load_bundled("ding", split="dev"), max_pairs=100, seed=1)
    texts = [_normalised(t) for t in fixture_texts + dev + ["Ça coûte 5 € 😀"]]
    ids = sp_tokenizer.tokenize(texts)
    assert isinstance(ids, tf.RaggedTensor) and ids.dtype == tf.int32
    assert tf.reduce_min(ids.flat_values) > EOS_ID  # no special ids added
    decoded = [t.decode("utf-8") for t in sp_tokenizer.detokenize(ids).numpy()]
    assert decoded == texts


def test_detokenize_drops_specials_and_accepts_padded(sp_tokenizer):
    ids = sp_tokenizer.tokenize(["Insert a table."]).to_tensor()  # [1, N]
    padded = np.concatenate([[[2]], ids, [[EOS_ID, PAD_ID, PAD_ID]]], axis=1)
    assert sp_tokenizer.detokenize(padded).numpy().tolist() == [b"Insert a table."]


def test_save_load_and_fingerprint(sp_tokenizer, tmp_path):
    path = tmp_path / "tokenizer.json"
    assert sp_tokenizer.save(path) == sp_tokenizer.fingerprint
    for loaded in (SentencePieceTokenizer.load(path), load_tokenizer(path)):
        assert isinstance(loaded, SentencePieceTokenizer)
        assert loaded.fingerprint == sp_tokenizer.fingerprint
        assert loaded.model_proto == sp_tokenizer.model_proto


def test_runs_in_tf_function_and_saved_model(sp_tokenizer, tmp_path):
    module = tf.Module()
    module.tokenizer = sp_tokenizer
    module.round_trip = tf.function(
        lambda x: sp_tokenizer.detokenize(sp_tokenizer.tokenize(x)),
        input_signature=[tf.TensorSpec([None], tf.string)],
    )
    tf.saved_model.save(module, str(tmp_path / "saved"))
    restored = tf.saved_model.load(str(tmp_path / "saved"))
    texts = tf.constant(["Open the file.", "Öffnen Sie die Datei."])
    assert restored.round_trip(texts).numpy().tolist() == texts.numpy().tolist()


def test_rejects_wrong_special_ids(fixture_texts):
    import io

    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(fixture_texts[:100]),
        model_writer=model,
        vocab_size=200,
        hard_vocab_limit=False,
        minloglevel=2,
    )  # SentencePiece defaults: unk 0, bos 1, eos 2, no pad
    with pytest.raises(ValueError, match=r"Received: \(-1, 0, 1, 2\)"):
        SentencePieceTokenizer(model.getvalue())
    with pytest.raises(ValueError, match="vocab_size=4"):
        SentencePieceTokenizer.train(fixture_texts, vocab_size=4)
