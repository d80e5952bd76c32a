"""Small random Transformers shared by the decoding tests.

Random weights over a 10-token vocabulary give varied, non-degenerate outputs
with eos about one step in ten, so hypotheses end at many lengths; training a
model would only add time. Decoding never changes the weights, so one model
for the session is safe to share.
"""

import keras
import pytest

from keras_transformer import Transformer

VOCAB_SIZE = 10
BOS_ID, EOS_ID = 2, 3


def make_tiny_model(**kwargs):
    keras.utils.set_random_seed(0)
    arguments = dict(
        source_vocab_size=VOCAB_SIZE,
        num_layers=2,
        hidden_dim=16,
        intermediate_dim=32,
        num_heads=2,
        dropout=0.0,
    )
    arguments.update(kwargs)
    return Transformer(**arguments)


@pytest.fixture(scope="session")
def tiny_model():
    return make_tiny_model()
