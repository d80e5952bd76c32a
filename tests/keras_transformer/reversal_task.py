"""A generated sequence-reversal task: a quick end-to-end check of the model.

Sources are random token sequences; the target is the source reversed. Solving
it needs attention from every target position to a distant source position, so
a model that reaches high exact-match accuracy shows that the masks, positions,
cross-attention and cached decoding work together.
"""

import dataclasses
import time

import keras
import numpy as np

from keras_transformer.decoding import DecodingConfig, translate
from keras_transformer.models.builder import build_transformer
from keras_transformer.transformer_config import TransformerConfig

PAD_ID, BOS_ID, EOS_ID = 0, 2, 3
FIRST_TOKEN = 4  # ids 0-3 are pad, unk, bos, eos


@dataclasses.dataclass(frozen=True)
class ToyTaskConfig:
    """Settings of the reversal demo (sized for a few CPU minutes)."""

    vocab_size: int = 24  # 4 special ids + 20 symbols
    min_length: int = 3  # shortest source, in tokens
    max_length: int = 10  # longest source, in tokens
    train_examples: int = 20_000  # generated training pairs
    test_examples: int = 200  # held-out pairs for exact-match accuracy
    epochs: int = 3  # passes over the training pairs
    batch_size: int = 64  # sentences per step
    learning_rate: float = 1e-3  # Adam, constant (the paper's schedule is §5.3)
    seed: int = 0  # data and weight initialisation


def make_reversal_data(num_examples, config, seed):
    """Returns `(source [N, L], decoder_input [N, L+1], target [N, L+1])`, pad 0.

    `decoder_input` is bos + reversed source ("shifted right"), `target` is the
    reversed source + eos.
    """
    rng = np.random.default_rng(seed)
    width = config.max_length
    source = np.zeros((num_examples, width), "int32")
    decoder_input = np.zeros((num_examples, width + 1), "int32")
    target = np.zeros((num_examples, width + 1), "int32")
    lengths = rng.integers(config.min_length, config.max_length + 1, num_examples)
    for i, length in enumerate(lengths):
        tokens = rng.integers(FIRST_TOKEN, config.vocab_size, length)
        source[i, :length] = tokens
        decoder_input[i, : length + 1] = [BOS_ID, *tokens[::-1]]
        target[i, : length + 1] = [*tokens[::-1], EOS_ID]
    return source, decoder_input, target


def run_toy_task(config=ToyTaskConfig(), model_config=None, verbose=1):
    """Trains a small Transformer on the reversal task and decodes the test set.

    Returns:
        A dict with the model, `exact_match` (fraction of test sources whose
        greedy output is exactly the reversal, eos included), `final_loss`,
        `train_seconds` and a few `examples`.
    """
    keras.utils.set_random_seed(config.seed)
    if model_config is None:
        model_config = TransformerConfig(
            num_layers=2,
            d_model=64,
            d_ff=128,
            num_heads=4,
            dropout=0.0,
            source_vocab_size=config.vocab_size,
            max_position_length=config.max_length + 1,
        )
    model = build_transformer(model_config)
    model.compile(
        optimizer=keras.optimizers.Adam(config.learning_rate),
        loss=keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, ignore_class=PAD_ID
        ),
    )
    # Its variables now, not in the first trace of the train step, which
    # `tf.function` would then trace again (as compile_transformer does).
    model.optimizer.build(model.trainable_variables)
    source, decoder_input, target = make_reversal_data(
        config.train_examples, config, seed=config.seed
    )
    start = time.perf_counter()
    history = model.fit(
        {"source_ids": source, "target_ids": decoder_input},
        target,
        batch_size=config.batch_size,
        epochs=config.epochs,
        verbose=verbose,
    )
    train_seconds = time.perf_counter() - start

    test_source, _, test_target = make_reversal_data(
        config.test_examples, config, seed=config.seed + 1
    )
    # Greedy over a buffer of the longest target (every sentence's limit,
    # source length + 50, is beyond it). [N, 1, L+1] -> [N, L+1]
    ids, _ = translate(
        model,
        test_source,
        DecodingConfig(method="greedy"),
        bos_id=BOS_ID,
        eos_id=EOS_ID,
        max_length=config.max_length + 1,
    )
    decoded = np.array(ids)[:, 0]
    exact = np.all(decoded == test_target, axis=1)
    examples = [(strip(test_source[i]), strip(decoded[i])) for i in range(3)]
    return {
        "model": model,
        "exact_match": float(exact.mean()),
        "final_loss": float(history.history["loss"][-1]),
        "train_seconds": train_seconds,
        "examples": examples,
    }


def strip(ids):
    """Token ids up to (not including) eos or padding, as a list of ints."""
    out = []
    for token in ids.tolist():
        if token in (PAD_ID, EOS_ID):
            break
        out.append(token)
    return out
