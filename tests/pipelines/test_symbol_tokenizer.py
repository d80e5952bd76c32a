import json

import numpy as np
import pytest
import tensorflow as tf

from pipelines import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    TOKENIZER_KINDS,
    UNK_ID,
    SymbolTokenizer,
    WordPieceTokenizer,
    linearize,
    load_bundled_trees,
    load_tokenizer,
    target_symbols,
    tokenizer_class,
    transforms,
)
from pipelines.tokenizers.tokenizer_artifact import content_fingerprint

# Ids 4-8 in this order.
SYMBOLS = ["(NP", "(S", ")NP", ")S", "XX"]
TARGET = "(S (NP XX )NP XX )S"


@pytest.fixture
def tokenizer():
    return SymbolTokenizer(SYMBOLS)


@pytest.fixture(scope="module")
def gum_targets():
    trees, _ = load_bundled_trees("dev")
    trees = trees[:200]
    return trees, [" ".join(linearize(tree)[1]) for tree in trees]


def test_hand_vocabulary_ids(tokenizer):
    assert tokenizer.vocabulary == ["<pad>", "<unk>", "<s>", "</s>", *SYMBOLS]
    assert tokenizer.symbols == SYMBOLS and tokenizer.vocab_size == 9
    ids = tokenizer.tokenize([TARGET, "(S (VP XX )VP )S", ""])
    assert isinstance(ids, tf.RaggedTensor) and ids.dtype == tf.int32
    assert ids.to_list() == [[5, 4, 8, 6, 8, 7], [5, UNK_ID, 8, UNK_ID, 7], []]
    # Any whitespace separates symbols; a scalar gives a flat [N].
    scalar = tokenizer.tokenize("  (S\tXX\n)S ")
    assert scalar.dtype == tf.int32 and scalar.numpy().tolist() == [5, 8, 7]
    assert tokenizer.id_to_piece([5, 1, 0]).numpy().tolist() == [
        b"(S",
        b"<unk>",
        b"<pad>",
    ]


def test_constructor_keeps_the_given_order():
    assert SymbolTokenizer(["b", "a"]).tokenize(["a b"]).to_list() == [[5, 4]]


def test_detokenize_drops_specials_and_accepts_padding(tokenizer):
    ragged = tf.ragged.constant([[BOS_ID, 5, 8, 7, EOS_ID], [5, UNK_ID, 7]])
    padded = np.array([[BOS_ID, 5, 8, 7, EOS_ID, PAD_ID], [5, 1, 7, 0, 0, 0]])
    expected = [b"(S XX )S", b"(S <unk> )S"]
    assert tokenizer.detokenize(ragged).numpy().tolist() == expected
    assert tokenizer.detokenize(padded).numpy().tolist() == expected
    assert tokenizer.detokenize(tf.constant(padded, tf.int64)).numpy().tolist() == (
        expected
    )
    assert tokenizer.detokenize([5, 8, 7, EOS_ID]).numpy() == b"(S XX )S"  # [N]
    # An id beyond the vocabulary (a larger output layer) reads as unk.
    assert tokenizer.detokenize([[5, 9, 1000, 7]]).numpy().tolist() == [
        b"(S <unk> <unk> )S"
    ]


def test_train_sorts_every_symbol(gum_targets):
    trees, targets = gum_targets
    trained = SymbolTokenizer.train(iter(targets))
    assert tuple(trained.symbols) == target_symbols(trees)
    assert trained.vocab_size == 4 + len(target_symbols(trees))
    ids = trained.tokenize(targets)
    assert int(tf.reduce_sum(tf.cast(ids.flat_values == UNK_ID, tf.int32))) == 0
    assert int(tf.reduce_min(ids.flat_values)) >= 4
    decoded = [t.decode("utf-8") for t in trained.detokenize(ids).numpy()]
    assert decoded == targets
    # Deterministic: the order of the texts does not matter.
    again = SymbolTokenizer.train(reversed(targets), vocab_size=trained.vocab_size)
    assert again.fingerprint == trained.fingerprint


def test_train_vocab_size_is_an_upper_bound():
    texts = ["(S XX )S", "(S (NP XX )NP )S <unk>"]
    trained = SymbolTokenizer.train(texts, vocab_size=100)
    assert trained.symbols == sorted(SYMBOLS) and trained.vocab_size == 9
    assert SymbolTokenizer.train(texts, vocab_size=9).vocab_size == 9
    with pytest.raises(ValueError, match=r"5 distinct symbols.*Received: vocab_size=8"):
        SymbolTokenizer.train(texts, vocab_size=8)
    with pytest.raises(ValueError, match=r"integer > 4\. Received: vocab_size=0"):
        SymbolTokenizer.train(texts, vocab_size=0)
    with pytest.raises(ValueError, match=r"not one string\. Received: texts="):
        SymbolTokenizer.train("(S XX )S")
    with pytest.raises(TypeError):
        SymbolTokenizer.train(texts, tags=True)  # no training options


def test_bad_symbols():
    cases = [
        ("(S XX", r"not one string\. Received: symbols='\(S XX'"),
        (["(S", "a b"], r"without whitespace\. Received: \['a b'\]"),
        (["(S", ""], r"Received: \[''\]"),
        (["(S", 3], r"Received: \[3\]"),
        (["(S", "<unk>"], r"special pieces.*Received: \['<unk>'\]"),
        (["(S", "(S"], r"distinct\. Received: 2 symbols, 1 distinct"),
    ]
    for symbols, message in cases:
        with pytest.raises(ValueError, match=message):
            SymbolTokenizer(symbols)


def test_save_load(tokenizer, tmp_path):
    path = tmp_path / "symbols.json"
    fingerprint = tokenizer.save(path)
    payload = "\n".join(tokenizer.vocabulary).encode("utf-8")
    assert (
        fingerprint == tokenizer.fingerprint == content_fingerprint("symbols", payload)
    )
    record = json.loads(path.read_text())
    assert record["kind"] == "symbols" and record["vocab_size"] == 9
    for loaded in (load_tokenizer(path), SymbolTokenizer.load(path)):
        assert type(loaded) is SymbolTokenizer
        assert loaded.fingerprint == fingerprint
        assert loaded.vocabulary == tokenizer.vocabulary
        assert loaded.tokenize([TARGET]).to_list() == [[5, 4, 8, 6, 8, 7]]
    # Stable: equal symbols, equal fingerprint; another order, another one.
    assert SymbolTokenizer(SYMBOLS).fingerprint == fingerprint
    assert SymbolTokenizer(SYMBOLS[::-1]).fingerprint != fingerprint
    with pytest.raises(ValueError, match=r"Expected a 'wordpiece'.*kind='symbols'"):
        WordPieceTokenizer.load(path)


def test_registered():
    assert TOKENIZER_KINDS["symbols"] is SymbolTokenizer
    assert tokenizer_class("symbols") is SymbolTokenizer


def test_target_tokenizer_of_tokenize_pairs(tokenizer):
    # The source side of parsing: any tokenizer; a symbol one stands in here.
    source = SymbolTokenizer(["John", "ran", "."])
    pairs = tf.data.Dataset.from_tensor_slices(
        (["John ran .", "John"], [TARGET, "(S XX )S"])
    )
    pairs = pairs.apply(transforms.tokenize_pairs(source, target_tokenizer=tokenizer))
    got = [(s.numpy().tolist(), t.numpy().tolist()) for s, t in pairs]
    assert got == [([4, 5, 6, EOS_ID], [5, 4, 8, 6, 8, 7]), ([4, EOS_ID], [5, 8, 7])]


class _Exported(tf.Module):
    def __init__(self, tokenizer):
        super().__init__()
        self.tokenizer = tokenizer

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def tokenize(self, strings):
        return self.tokenizer.tokenize(strings).to_tensor()  # [B, N], padded

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
    def detokenize(self, ids):
        return self.tokenizer.detokenize(ids)


def test_saved_model_round_trip(tokenizer, tmp_path):
    strings = tf.constant([TARGET, "(S foo )S"])
    module = _Exported(tokenizer)
    expected_ids = module.tokenize(strings).numpy()
    assert expected_ids.tolist() == [[5, 4, 8, 6, 8, 7], [5, 1, 7, 0, 0, 0]]
    tf.saved_model.save(module, str(tmp_path / "model"))
    del module
    reloaded = tf.saved_model.load(str(tmp_path / "model"))
    ids = reloaded.tokenize(strings)
    np.testing.assert_array_equal(ids.numpy(), expected_ids)
    texts = reloaded.detokenize(tf.constant(expected_ids, tf.int32))
    assert texts.numpy().tolist() == [TARGET.encode(), b"(S <unk> )S"]
