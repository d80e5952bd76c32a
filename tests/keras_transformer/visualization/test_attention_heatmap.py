import sys

import numpy as np
import pytest

from keras_transformer.visualization import plot_attention

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ROWS = ["<s>", "Das", "Haus"]
COLUMNS = ["The", "house", "is", "</s>"]


def _weights(heads=3, seed=0):
    logits = np.random.default_rng(seed).normal(size=(heads, len(ROWS), len(COLUMNS)))
    return np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)


def _read_png(path):
    from matplotlib import image

    with open(path, "rb") as f:
        assert f.read(8) == PNG_SIGNATURE
    return image.imread(path)


def test_writes_a_png_with_one_panel_per_head(tmp_path):
    one = _read_png(
        plot_attention(_weights(), ROWS, COLUMNS, tmp_path / "one.png", [1])
    )
    three = _read_png(plot_attention(_weights(), ROWS, COLUMNS, tmp_path / "all.png"))
    assert one.ndim == 3 and one.shape[-1] in (3, 4)
    # Three panels side by side make a wider picture than one.
    assert three.shape[1] > 2 * one.shape[1]
    # Not a blank canvas.
    assert one[..., :3].std() > 0.05


def test_returns_the_path_and_creates_folders(tmp_path):
    path = tmp_path / "a" / "b" / "attention.png"
    assert plot_attention(_weights(1)[0], ROWS, COLUMNS, path) == str(path)
    _read_png(path)


def test_many_heads_wrap_into_rows(tmp_path):
    wide = _read_png(plot_attention(_weights(4), ROWS, COLUMNS, tmp_path / "4.png"))
    tall = _read_png(plot_attention(_weights(8), ROWS, COLUMNS, tmp_path / "8.png"))
    assert tall.shape[1] == wide.shape[1]
    assert tall.shape[0] > 1.5 * wide.shape[0]


def test_leaves_the_pyplot_backend_alone(tmp_path):
    import matplotlib

    backend = matplotlib.get_backend()
    plot_attention(_weights(), ROWS, COLUMNS, tmp_path / "x.png", title="Figure 3")
    assert matplotlib.get_backend() == backend


@pytest.mark.parametrize(
    "weights,rows,columns,heads,message",
    [
        (np.ones((2, 2, 3, 4)), ROWS, COLUMNS, None, r"weights.shape=\(2, 2, 3, 4\)"),
        (np.ones((2, 0, 4)), [], COLUMNS, None, r"weights.shape=\(2, 0, 4\)"),
        (_weights(), ROWS[:2], COLUMNS, None, r"len\(row_tokens\)=2"),
        (_weights(), ROWS, COLUMNS + ["x"], None, r"len\(column_tokens\)=5"),
        (_weights(), ROWS, COLUMNS, [0, 3], r"heads=\[0, 3\]"),
        (_weights(), ROWS, COLUMNS, -1, "heads=-1"),
        (_weights(), ROWS, COLUMNS, [], r"heads=\[\]"),
        (_weights(), ROWS, COLUMNS, [True], r"heads=\[True\]"),
        (_weights(), ROWS, COLUMNS, "0", "heads='0'"),
    ],
)
def test_bad_arguments(tmp_path, weights, rows, columns, heads, message):
    with pytest.raises(ValueError, match=message):
        plot_attention(weights, rows, columns, tmp_path / "x.png", heads=heads)
    assert not (tmp_path / "x.png").exists()


def test_missing_matplotlib_says_how_to_install_it(tmp_path, monkeypatch):
    for module in (
        "matplotlib",
        "matplotlib.figure",
        "matplotlib.backends.backend_agg",
    ):
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError, match="pip install matplotlib"):
        plot_attention(_weights(), ROWS, COLUMNS, tmp_path / "x.png")
