"""A random tiny Transformer and a word-level "tokenizer" for evaluation tests."""

import keras
import pytest

from keras_transformer import Transformer

WORDS = ["the", "cat", "sat", "on", "mat", "well-known"]
# ids 0-3 are pad, unk, bos, eos; words start at 4
WORD_IDS = {word: i + 4 for i, word in enumerate(WORDS)}


def tokenize(texts):
    """Each text's word ids, then eos (3)."""
    return [[WORD_IDS.get(word, 1) for word in text.split()] + [3] for text in texts]


def detokenize(rows):
    """Each row of ids as its words."""
    return [" ".join(WORDS[i - 4] if i >= 4 else "<unk>" for i in ids) for ids in rows]


@pytest.fixture(scope="module")
def tiny_model():
    keras.utils.set_random_seed(0)
    return Transformer(
        source_vocab_size=4 + len(WORDS),
        num_layers=1,
        hidden_dim=16,
        intermediate_dim=32,
        num_heads=2,
        dropout=0.0,
    )
