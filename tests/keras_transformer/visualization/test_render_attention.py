import numpy as np
import pytest

from keras_transformer.visualization import attention_weights, render_attention
from tests.keras_transformer.visualization.conftest import (
    NUM_HEADS,
    NUM_LAYERS,
    SOURCE_IDS,
    TARGET_IDS,
)

# Sentence 1 of the batch: padded source and target.
SOURCE, TARGET = SOURCE_IDS[1], TARGET_IDS[1]
SOURCE_TOKENS = ["Das", "Haus", "ist", "</s>", "<pad>", "<pad>"]
TARGET_TOKENS = ["<s>", "The", "house", "<pad>", "<pad>"]
SHAPES = {
    "encoder": (len(SOURCE), len(SOURCE)),
    "decoder": (len(TARGET), len(TARGET)),
    "cross": (len(TARGET), len(SOURCE)),
}


def _render(model, path, **kwargs):
    return render_attention(
        model, SOURCE, TARGET, SOURCE_TOKENS, TARGET_TOKENS, path, **kwargs
    )


@pytest.fixture(scope="module")
def weights(model):
    return attention_weights(model, SOURCE_IDS[1:], TARGET_IDS[1:])


@pytest.mark.parametrize("kind", ["encoder", "decoder", "cross"])
def test_plots_the_models_weights(model, weights, tmp_path, kind):
    path, plotted = _render(model, tmp_path / f"{kind}.png", kind=kind)
    assert path == str(tmp_path / f"{kind}.png")
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    from matplotlib import image

    assert image.imread(path).ndim == 3
    assert plotted.shape == (NUM_HEADS, *SHAPES[kind])
    np.testing.assert_array_equal(plotted, weights[kind][-1][0])
    np.testing.assert_allclose(plotted.sum(-1), 1.0, atol=1e-5)


def test_padding_and_future_positions_are_exactly_zero(model, tmp_path):
    _, cross = _render(model, tmp_path / "cross.png", kind="cross")
    _, encoder = _render(model, tmp_path / "encoder.png", kind="encoder")
    _, decoder = _render(model, tmp_path / "decoder.png", kind="decoder")
    assert (cross[..., SOURCE == 0] == 0).all()
    assert (encoder[..., SOURCE == 0] == 0).all()
    assert (decoder[..., TARGET == 0] == 0).all()
    assert (np.triu(decoder, k=1) == 0).all()


@pytest.mark.parametrize("layer,index", [(0, 0), (1, 1), (-1, 1), (-2, 0)])
def test_layer_indices(model, weights, tmp_path, layer, index):
    _, plotted = _render(model, tmp_path / "x.png", kind="encoder", layer=layer)
    np.testing.assert_array_equal(plotted, weights["encoder"][index][0])


def test_chosen_heads_in_order(model, weights, tmp_path):
    _, plotted = _render(model, tmp_path / "x.png", heads=[1, 0])
    np.testing.assert_array_equal(plotted, weights["cross"][-1][0][[1, 0]])
    _, plotted = _render(model, tmp_path / "y.png", heads=1)
    np.testing.assert_array_equal(plotted, weights["cross"][-1][0][[1]])


def test_batch_of_one_is_accepted(model, tmp_path):
    _, plotted = render_attention(
        model,
        SOURCE[None],
        TARGET[None],
        SOURCE_TOKENS,
        TARGET_TOKENS,
        tmp_path / "x.png",
    )
    assert plotted.shape == (NUM_HEADS, *SHAPES["cross"])


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"kind": "self"}, "kind='self'"),
        ({"layer": NUM_LAYERS}, f"layer={NUM_LAYERS}"),
        ({"layer": -NUM_LAYERS - 1}, f"layer={-NUM_LAYERS - 1}"),
        ({"layer": 1.0}, "layer=1.0"),
        ({"layer": True}, "layer=True"),
        ({"heads": [NUM_HEADS]}, rf"heads=\[{NUM_HEADS}\]"),
        ({"heads": -1}, "heads=-1"),
    ],
)
def test_bad_choices(model, tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        _render(model, tmp_path / "x.png", **kwargs)
    assert not (tmp_path / "x.png").exists()


def test_bad_sentences(model, tmp_path):
    path = tmp_path / "x.png"
    with pytest.raises(ValueError, match=r"source_ids.shape=\(2, 6\)"):
        render_attention(model, SOURCE_IDS, TARGET, SOURCE_TOKENS, TARGET_TOKENS, path)
    with pytest.raises(ValueError, match=r"len\(target_tokens\)=4"):
        render_attention(model, SOURCE, TARGET, SOURCE_TOKENS, TARGET_TOKENS[:4], path)


def test_encoder_layers_of_a_deeper_encoder(tmp_path):
    from keras_transformer import TransformerConfig, build_transformer

    config = TransformerConfig.from_preset(
        "base",
        num_layers=1,
        num_encoder_layers=3,
        d_model=16,
        d_ff=32,
        num_heads=NUM_HEADS,
        source_vocab_size=29,
        max_position_length=32,
    )
    deep = build_transformer(config)
    weights = attention_weights(deep, SOURCE_IDS[1:], TARGET_IDS[1:])
    _, plotted = _render(deep, tmp_path / "x.png", kind="encoder")
    np.testing.assert_array_equal(plotted, weights["encoder"][2][0])
    _, plotted = _render(deep, tmp_path / "y.png", kind="cross", layer=-1)
    np.testing.assert_array_equal(plotted, weights["cross"][0][0])
    with pytest.raises(ValueError, match="the model has 1 layers"):
        _render(deep, tmp_path / "z.png", kind="decoder", layer=1)
