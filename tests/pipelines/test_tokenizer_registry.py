import pytest

from pipelines import (
    TOKENIZER_KINDS,
    MarianTokenizer,
    SentencePieceTokenizer,
    SymbolTokenizer,
    WordPieceTokenizer,
    load_tokenizer,
    tokenizer_class,
)
from pipelines.tokenizers.tokenizer_artifact import write_artifact


def test_kinds_map_to_their_classes():
    assert dict(TOKENIZER_KINDS) == {
        "sentencepiece": SentencePieceTokenizer,
        "wordpiece": WordPieceTokenizer,
        "symbols": SymbolTokenizer,
        "marian": MarianTokenizer,
    }
    for kind, cls in TOKENIZER_KINDS.items():
        assert tokenizer_class(kind) is cls
        assert cls.kind == kind
    with pytest.raises(TypeError):
        TOKENIZER_KINDS["bpe"] = SentencePieceTokenizer  # read-only


def test_unknown_kind(tmp_path):
    for kind in ("bpe", "", None, "SentencePiece"):
        with pytest.raises(ValueError, match=rf"Received: kind={kind!r}"):
            tokenizer_class(kind)
    # An artefact that is valid but of a kind nobody registered.
    path = tmp_path / "bpe.json"
    write_artifact(path, "bpe", b"payload", 8)
    with pytest.raises(ValueError, match=r"kind='bpe' in .*bpe\.json"):
        load_tokenizer(path)


# The Marian kind comes with an imported model and is never trained; its
# round trip is in test_marian_tokenizer.py.
@pytest.mark.parametrize("kind", sorted(set(TOKENIZER_KINDS) - {"marian"}))
def test_each_kind_round_trips(kind, fixture_texts, tmp_path):
    texts = fixture_texts[:120]
    # Whole-token symbols keep every distinct word: no size bound for them.
    vocab_size = None if kind == "symbols" else 500
    tokenizer = tokenizer_class(kind).train(texts, vocab_size=vocab_size)
    path = tmp_path / f"{kind}.json"
    assert tokenizer.save(path) == tokenizer.fingerprint
    ids = tokenizer.tokenize(texts).to_list()
    for loaded in (load_tokenizer(path), tokenizer_class(kind).load(path)):
        assert type(loaded) is type(tokenizer)
        assert loaded.fingerprint == tokenizer.fingerprint
        assert loaded.vocab_size == tokenizer.vocab_size
        assert loaded.tokenize(texts).to_list() == ids
