"""A tiny trained-shape Transformer and a padded sentence pair for the picture tests."""

import numpy as np
import pytest

from keras_transformer import TransformerConfig, build_transformer

VOCAB = 29
NUM_LAYERS = 2
NUM_HEADS = 2

# Two sentence pairs; the second is padded (id 0) in source and target.
SOURCE_IDS = np.array([[5, 9, 13, 4, 7, 2], [8, 3, 11, 2, 0, 0]], "int32")
TARGET_IDS = np.array([[1, 6, 12, 4, 10], [1, 14, 3, 0, 0]], "int32")


@pytest.fixture(scope="module")
def model():
    import keras

    keras.utils.set_random_seed(7)
    config = TransformerConfig.from_preset(
        "base",
        num_layers=NUM_LAYERS,
        d_model=16,
        d_ff=32,
        num_heads=NUM_HEADS,
        source_vocab_size=VOCAB,
        max_position_length=32,
    )
    return build_transformer(config)
