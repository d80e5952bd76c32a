"""The tiny model and data of the training test scripts.

The scripts run as subprocesses and import this module from their own folder.
"""

import numpy as np

from keras_transformer import TransformerConfig, build_transformer


def tiny_transformer(dropout=0.0, vocab_size=30):
    """A 1-layer, d_model 16 Transformer."""
    return build_transformer(
        TransformerConfig(
            num_layers=1,
            d_model=16,
            d_ff=32,
            num_heads=2,
            dropout=dropout,
            source_vocab_size=vocab_size,
        )
    )


def reversal_pairs(count, vocab_size=30, length=6):
    """`(inputs, target)` arrays: target = reversed source + eos; bos = 2."""
    rng = np.random.default_rng(0)
    source = rng.integers(4, vocab_size, (count, length)).astype("int32")
    target = np.concatenate([source[:, ::-1], np.full((count, 1), 3)], 1)
    decoder_input = np.concatenate([np.full((count, 1), 2), target[:, :-1]], 1)
    inputs = {"source_ids": source, "target_ids": decoder_input.astype("int32")}
    return inputs, target.astype("int32")
