"""The packages together: bundled fixture -> tokenizer -> token batches -> fit."""

import dataclasses

import keras
import numpy as np

from keras_transformer import TransformerConfig, build_transformer
from keras_transformer.training import compile_transformer
from pipelines import (
    PAD_ID,
    BatchingConfig,
    SentencePieceTokenizer,
    make_dataset,
    read_parallel_tsv,
)
from pipelines.text.bundled import bundled_corpus_path


def test_a_few_fit_steps_on_the_bundled_fixture_reduce_the_loss():
    keras.utils.set_random_seed(0)  # before the tokenizer (tensorflow-text quirk)
    pairs = read_parallel_tsv(bundled_corpus_path("fixture", "en-de", "all"))
    texts = [t.decode() for pair in pairs.as_numpy_iterator() for t in pair]
    tokenizer = SentencePieceTokenizer.train(texts, vocab_size=600)
    config = dataclasses.replace(
        BatchingConfig(), tokens_per_batch=1024, max_train_length=64, seed=0
    )
    dataset = make_dataset(pairs, tokenizer, config)
    inputs, targets = next(iter(dataset))
    assert set(inputs) == {"source_ids", "target_ids"}
    assert inputs["target_ids"].shape == targets.shape
    assert int(np.sum(np.array(targets) != PAD_ID)) > 0

    model = build_transformer(
        TransformerConfig(
            num_layers=1,
            d_model=32,
            d_ff=64,
            num_heads=2,
            source_vocab_size=tokenizer.vocab_size,
            max_position_length=64,
        )
    )
    compile_transformer(model, warmup_steps=20, learning_rate_scale=2.0)
    history = model.fit(dataset.repeat(), steps_per_epoch=15, epochs=3, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0] - 0.5, losses
