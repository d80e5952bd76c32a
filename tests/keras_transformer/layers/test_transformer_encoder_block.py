import numpy as np
import pytest

from keras_transformer.layers import TransformerEncoderBlock
from tests.layer_check import run_layer_check


def _sequence(batch=2, length=5, dim=8, seed=0):
    return (
        np.random.default_rng(seed).normal(size=(batch, length, dim)).astype("float32")
    )


@pytest.mark.parametrize("normalize_first", [False, True])
def test_layer_check(tmp_path, normalize_first):
    mask = np.ones((2, 5), bool)
    mask[0, 3:] = False
    run_layer_check(
        TransformerEncoderBlock,
        {
            "num_heads": 2,
            "intermediate_dim": 16,
            "dropout": 0.1,
            "normalize_first": normalize_first,
        },
        {"inputs": _sequence(), "padding_mask": mask},
        expected_output_shape=(2, 5, 8),
        tmp_path=tmp_path,
    )


def test_padding_does_not_change_real_positions():
    block = TransformerEncoderBlock(num_heads=2, intermediate_dim=16)
    x = _sequence(batch=1, length=3)
    padded = np.concatenate([x, _sequence(batch=1, length=4, seed=1)], axis=1)
    mask = np.array([[True] * 3 + [False] * 4])
    short = np.array(block(x))
    long = np.array(block(padded, padding_mask=mask))
    np.testing.assert_allclose(long[:, :3], short, atol=1e-5)


def test_post_norm_output_is_normalised_per_position():
    output = np.array(TransformerEncoderBlock(2, 16)(_sequence()))
    np.testing.assert_allclose(output.mean(-1), 0.0, atol=1e-5)
    np.testing.assert_allclose(output.std(-1), 1.0, atol=1e-3)


def test_attention_scores_are_returned_and_masked():
    mask = np.array([[True, True, False, False, False]] * 2)
    _, scores = TransformerEncoderBlock(2, 16)(
        _sequence(), padding_mask=mask, return_attention_scores=True
    )
    scores = np.array(scores)
    assert scores.shape == (2, 2, 5, 5)
    np.testing.assert_allclose(scores.sum(-1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(scores[..., 2:], 0.0)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"num_heads": 0, "intermediate_dim": 8}, "num_heads=0"),
        ({"num_heads": 2, "intermediate_dim": 8, "dropout": -0.5}, "dropout=-0.5"),
        ({"num_heads": 2, "intermediate_dim": 8, "key_dim": 0}, "key_dim=0"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TransformerEncoderBlock(**kwargs)


def test_d_model_not_divisible_by_heads():
    with pytest.raises(ValueError, match="d_model=10, num_heads=4"):
        TransformerEncoderBlock(num_heads=4, intermediate_dim=8)(_sequence(dim=10))
