import numpy as np
import pytest
import tensorflow as tf

from pipelines import (
    TOKENIZER_KINDS,
    SentencePieceTokenizer,
    SubwordTokenizer,
    WordPieceTokenizer,
)
from pipelines.tokenizers.tokenizer_artifact import content_fingerprint


class _Letters(SubwordTokenizer):
    """A toy kind: the payload is the vocabulary's letters, one byte each."""

    kind = "letters"
    default_vocab_size = 7
    trained_with = []

    def __init__(self, letters):
        super().__init__(letters, len(letters), name="letters")

    @classmethod
    def _train_payload(cls, texts, vocab_size, *, upper=False):
        cls.trained_with.append((list(texts), vocab_size, upper))
        return (b"ABCDEFGHIJ" if upper else b"abcdefghij")[:vocab_size]

    @classmethod
    def from_payload(cls, payload):
        return cls(payload)

    def tokenize(self, strings):
        return tf.strings.unicode_decode(strings, "UTF-8")

    def detokenize(self, ids):
        return tf.strings.unicode_encode(self._ragged_ids(ids), "UTF-8")

    def id_to_piece(self, ids):
        return tf.strings.unicode_encode(ids, "UTF-8")


def test_is_abstract():
    with pytest.raises(TypeError, match="abstract"):
        SubwordTokenizer(b"abc", 3, name="base")


def test_train_save_load_in_the_base(tmp_path):
    _Letters.trained_with.clear()
    default = _Letters.train(iter(["x", "y"]))
    upper = _Letters.train(["z"], 5, upper=True)
    assert _Letters.trained_with == [(["x", "y"], 7, False), (["z"], 5, True)]
    assert default.vocab_size == 7 and upper.vocab_size == 5
    assert default.fingerprint == content_fingerprint("letters", b"abcdefg")
    with pytest.raises(TypeError, match="lower"):
        _Letters.train(["x"], lower=True)  # options are the kind's, by keyword
    path = tmp_path / "letters.json"
    assert upper.save(path) == upper.fingerprint
    assert _Letters.load(path).fingerprint == upper.fingerprint
    with pytest.raises(ValueError, match="Expected a 'wordpiece'.*kind='letters'"):
        WordPieceTokenizer.load(path)


@pytest.mark.parametrize("kind", sorted(TOKENIZER_KINDS))
@pytest.mark.parametrize("vocab_size", [4, 0, 4.5, "8", None])
def test_train_checks_vocab_size(kind, vocab_size, monkeypatch):
    cls = TOKENIZER_KINDS[kind]
    if vocab_size is None:  # None means the kind's default: make it bad too
        monkeypatch.setattr(cls, "default_vocab_size", 3)
    with pytest.raises(ValueError, match=r"integer > 4\. Received: vocab_size="):
        cls.train(["a b c"], vocab_size=vocab_size)


def test_default_vocab_sizes_are_the_papers():
    # §5.1: about 37000 BPE tokens (En-De), 32000 word-pieces (En-Fr).
    assert SentencePieceTokenizer.default_vocab_size == 37_000
    assert WordPieceTokenizer.default_vocab_size == 32_000


def test_ragged_ids():
    padded = np.array([[5, 6, 0], [7, 0, 0]], np.int64)
    ragged = SubwordTokenizer._ragged_ids(padded)
    assert isinstance(ragged, tf.RaggedTensor) and ragged.dtype == tf.int32
    assert ragged.to_list() == [[5, 6], [7]]
    flat = SubwordTokenizer._ragged_ids([5, 6, 0])  # rank 1: kept as is
    assert flat.dtype == tf.int32 and flat.numpy().tolist() == [5, 6, 0]
    assert _Letters(b"ab").detokenize([[104, 105, 0]]).numpy().tolist() == [b"hi"]


def test_sentencepiece_artifact_is_not_wordpiece(sp_tokenizer, tmp_path):
    path = tmp_path / "sp.json"
    sp_tokenizer.save(path)
    with pytest.raises(ValueError, match="Expected a 'wordpiece'"):
        WordPieceTokenizer.load(path)
