import unicodedata

import pytest
import tensorflow as tf

from pipelines import UNK_ID, WordPieceTokenizer, load_tokenizer

VOCAB = ["<pad>", "<unk>", "<s>", "</s>", "Open", "the", "file", "##s", ".", "##."]


@pytest.fixture(scope="module")
def trained(fixture_texts):
    # The learner is pure Python and slow: 120 sentences are enough here.
    return WordPieceTokenizer.train(fixture_texts[:120], vocab_size=400)


def test_hand_vocabulary():
    tokenizer = WordPieceTokenizer(VOCAB)
    ids = tokenizer.tokenize(["Open the files.", "Open xyz"])
    assert ids.dtype == tf.int32
    assert ids.to_list() == [[4, 5, 6, 7, 9], [4, UNK_ID]]
    text = tokenizer.detokenize([[2, 4, 5, 6, 7, 9, 3, 0]])
    assert text.numpy().tolist() == [b"Open the files."]


def test_train_and_round_trip(trained, fixture_texts):
    texts = [
        unicodedata.normalize("NFKC", " ".join(t.split())) for t in fixture_texts[:120]
    ]
    ids = trained.tokenize(texts)
    assert int(tf.reduce_sum(tf.cast(ids.flat_values == UNK_ID, tf.int32))) == 0
    decoded = [t.decode("utf-8") for t in trained.detokenize(ids).numpy()]
    assert decoded == texts
    assert trained.vocabulary[:4] == ["<pad>", "<unk>", "<s>", "</s>"]


def test_save_load(trained, tmp_path):
    path = tmp_path / "wp.json"
    assert trained.save(path) == trained.fingerprint
    loaded = load_tokenizer(path)
    assert isinstance(loaded, WordPieceTokenizer)
    assert loaded.fingerprint == trained.fingerprint
    assert loaded.vocabulary == trained.vocabulary
    with pytest.raises(ValueError, match="Expected a 'sentencepiece'"):
        from pipelines import SentencePieceTokenizer

        SentencePieceTokenizer.load(path)


def test_bad_vocabulary():
    with pytest.raises(ValueError, match="must start with"):
        WordPieceTokenizer(["a", "b"])
    with pytest.raises(ValueError, match="unique"):
        WordPieceTokenizer(VOCAB + ["the"])
