import pytest

from keras_transformer.visualization import plot_learning_curve

ROWS = [
    {"step": 200, "minutes": 0.9, "loss": 6.1, "dev_bleu": 0.5},
    {"step": 400, "minutes": 1.8, "loss": 4.2, "dev_bleu": 4.0},
    {"step": 600, "minutes": 2.8, "loss": 3.5},
]


def test_writes_a_png(tmp_path):
    path = plot_learning_curve(ROWS, tmp_path / "out" / "curve.png", title="demo")
    with open(path, "rb") as file:
        assert file.read(8) == b"\x89PNG\r\n\x1a\n"


def test_loss_only_rows_draw_too(tmp_path):
    rows = [{key: row[key] for key in ("step", "minutes", "loss")} for row in ROWS]
    assert plot_learning_curve(rows, tmp_path / "curve.png").endswith("curve.png")


@pytest.mark.parametrize("rows", [[], [{"step": 1, "loss": 2.0}]])
def test_rows_without_the_fields_are_refused(tmp_path, rows):
    with pytest.raises(ValueError, match="Received: rows="):
        plot_learning_curve(rows, tmp_path / "curve.png")
    assert not (tmp_path / "curve.png").exists()
