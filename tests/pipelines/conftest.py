"""Shared fixtures for the pipeline tests: the bundled 300-pair fixture and a
small SentencePiece model trained on it once per session."""

import numpy as np
import pytest

from pipelines import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    SentencePieceTokenizer,
    load_bundled,
    sample_texts,
)


@pytest.fixture(scope="session")
def fixture_pairs():
    return load_bundled("fixture", split="all")


@pytest.fixture(scope="session")
def fixture_texts(fixture_pairs):
    return sample_texts(fixture_pairs)


@pytest.fixture(scope="session")
def sp_model_proto(fixture_texts):
    tokenizer = SentencePieceTokenizer.train(fixture_texts, vocab_size=1000)
    return tokenizer.model_proto


@pytest.fixture
def sp_tokenizer(sp_model_proto):
    # Built per test: tests/conftest.py reseeds TensorFlow before every test,
    # and tf.random.set_seed frees the kernels that own tensorflow-text's
    # SentencePiece resources (see SentencePieceTokenizer's docstring).
    return SentencePieceTokenizer(sp_model_proto)


def expected_kept(pairs, tokenizer, max_length):
    """Reference, in NumPy: the (source_ids + eos, target_ids + eos) of every
    pair `make_dataset` must keep, as a sorted list of tuples."""
    sources, targets = zip(*pairs.as_numpy_iterator(), strict=True)
    kept = []
    for source_ids, target_ids in zip(
        tokenizer.tokenize(list(sources)).to_list(),
        tokenizer.tokenize(list(targets)).to_list(),
        strict=True,
    ):
        source_ids, target_ids = source_ids + [EOS_ID], target_ids + [EOS_ID]
        if 1 < len(source_ids) <= max_length and 1 < len(target_ids) <= max_length:
            kept.append((tuple(source_ids), tuple(target_ids)))
    return sorted(kept)


def unpad(row):
    row = np.asarray(row)
    length = int(np.sum(row != PAD_ID))
    assert np.all(row[length:] == PAD_ID), "padding must be at the end only"
    return tuple(row[:length].tolist())


def epoch_pairs_and_shapes(dataset, empty_rows=False):
    """Iterates one epoch; returns the sorted (source, target_out) tuples and
    the list of (batch, source length, target length) shapes, checking that
    target_in is bos + target_out[:-1] on every row. With `empty_rows`,
    all-padding rows (static mode's filled partial batches) are allowed, only
    after a batch's real rows, and left out of the pairs."""
    pairs, shapes = [], []
    for inputs, target_out in dataset.as_numpy_iterator():
        source, target_in = inputs["source_ids"], inputs["target_ids"]
        assert source.dtype == target_in.dtype == target_out.dtype == np.int32
        assert target_in.shape == target_out.shape
        shapes.append((source.shape[0], source.shape[1], target_in.shape[1]))
        real_rows = (source != 0).any(axis=1)
        assert real_rows[0] and not np.any(np.diff(real_rows.astype(int)) > 0)
        if not empty_rows:
            assert real_rows.all()
        rows = real_rows.nonzero()[0]
        for s, t_in, t_out in zip(
            source[rows], target_in[rows], target_out[rows], strict=True
        ):
            s, t_in, t_out = unpad(s), unpad(t_in), unpad(t_out)
            assert t_in == (BOS_ID,) + t_out[:-1] and t_out[-1] == EOS_ID
            pairs.append((s, t_out))
    return sorted(pairs), shapes
