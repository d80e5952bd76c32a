"""Attention heatmaps as PNG files, one panel per head (paper Figures 3-5)."""

import math
import os
from pathlib import Path

import numpy as np

# Panels per row of the figure; the paper's figures show up to 8 heads.
_MAX_COLUMNS = 4
# Figure inches per token, and the smallest panel side in inches.
_INCHES_PER_TOKEN = 0.3
_MIN_PANEL_INCHES = 2.5


def plot_attention(
    weights,
    row_tokens,
    column_tokens,
    path,
    heads=None,
    title=None,
    dpi=100,
):
    """Draws attention weights as heatmaps and writes them to a PNG file.

    The paper draws attention as lines between words (Figures 3-5); a heatmap
    of the same matrix (queries as rows, keys as columns, one panel per head) is
    the usual rendering in translation toolkits and shows every weight at once.
    All panels share one colour scale from 0 to the largest weight drawn.

    Drawing uses matplotlib's non-interactive Agg canvas directly (no pyplot
    and no global backend switch), so it works without a display and leaves a
    caller's matplotlib state alone.

    Args:
        weights: float array `[H, R, C]` (every head of one layer) or `[R, C]`
            (one matrix), rows are queries, columns are keys.
        row_tokens: sequence of R strings, the query tokens (y axis).
        column_tokens: sequence of C strings, the key tokens (x axis, rotated).
        path: str or path-like. The PNG file to write; parent folders are
            created.
        heads: optional sequence of head indices (into the H axis) to draw, in
            order. Defaults to every head.
        title: optional str. The figure title.
        dpi: int. Resolution of the image. Defaults to `100`.

    Returns:
        `path` as a str.

    Examples:
        >>> import numpy as np
        >>> weights = np.full((2, 3, 3), 1 / 3)
        >>> plot_attention(weights, ["a", "b", "c"], ["a", "b", "c"],
        ...                "/tmp/attention.png")
        '/tmp/attention.png'
    """
    weights = np.asarray(weights, dtype="float32")
    one_matrix = weights.ndim == 2
    if one_matrix:
        # [R, C] -> [1, R, C]
        weights = weights[None]
    if weights.ndim != 3 or 0 in weights.shape:
        raise ValueError(
            "`weights` expected a non-empty array [heads, rows, columns] or "
            f"[rows, columns]. Received: weights.shape={weights.shape}"
        )
    num_heads, num_rows, num_columns = weights.shape
    row_tokens = [str(token) for token in row_tokens]
    column_tokens = [str(token) for token in column_tokens]
    if len(row_tokens) != num_rows:
        raise ValueError(
            f"`row_tokens` expected {num_rows} tokens, one per row of `weights`. "
            f"Received: len(row_tokens)={len(row_tokens)}"
        )
    if len(column_tokens) != num_columns:
        raise ValueError(
            f"`column_tokens` expected {num_columns} tokens, one per column of "
            f"`weights`. Received: len(column_tokens)={len(column_tokens)}"
        )
    heads = check_heads(heads, num_heads)

    figure_class, canvas_class = matplotlib_classes()
    columns = min(len(heads), _MAX_COLUMNS)
    rows = math.ceil(len(heads) / columns)
    panel_width = max(_MIN_PANEL_INCHES, _INCHES_PER_TOKEN * num_columns + 1.0)
    panel_height = max(_MIN_PANEL_INCHES, _INCHES_PER_TOKEN * num_rows + 1.0)
    figure = figure_class(
        figsize=(panel_width * columns + 1.0, panel_height * rows + 0.6),
        layout="constrained",
    )
    canvas_class(figure)
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    vmax = float(weights[heads].max()) or 1.0
    image = None
    for ax, head in zip(axes, heads, strict=False):
        image = ax.imshow(
            weights[head], cmap="viridis", vmin=0.0, vmax=vmax, aspect="auto"
        )
        if not one_matrix:
            ax.set_title(f"head {head}")
        ax.set_xticks(range(num_columns), column_tokens, rotation=90)
        ax.set_yticks(range(num_rows), row_tokens)
        ax.tick_params(length=0)
    for ax in axes[len(heads) :]:
        ax.set_axis_off()
    figure.colorbar(image, ax=axes.tolist(), shrink=0.8)
    return save_figure(figure, path, title, dpi)


def save_figure(figure, path, title, dpi):
    """Writes `figure` (with `title`, if any) to the PNG file `path`,
    creating parent folders; returns `path` as a str."""
    if title:
        figure.suptitle(title)
    path = Path(os.fspath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png", dpi=dpi)
    return str(path)


def check_heads(heads, num_heads):
    """Returns `heads` as a list of ints in [0, num_heads), or raises a `ValueError`.

    Args:
        heads: `None` (every head), an int, or a sequence of ints.
        num_heads: int. The number of heads H.

    Returns:
        A non-empty list of head indices.
    """
    if heads is None:
        return list(range(num_heads))
    received = heads
    if _is_int(heads):
        heads = [heads]
    try:
        heads = list(heads)
    except TypeError:
        heads = []
    if not heads or not all(_is_int(head) and 0 <= head < num_heads for head in heads):
        raise ValueError(
            f"`heads` expected head indices in [0, {num_heads - 1}] (there are "
            f"{num_heads} heads), or None for all. Received: heads={received!r}"
        )
    return [int(head) for head in heads]


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def matplotlib_classes():
    """matplotlib's `Figure` and Agg canvas, imported on first use (importing
    the package does not load matplotlib)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError(
            "Drawing needs matplotlib, which is not installed (it is a "
            "dependency of keras-transformer). Install it with: pip install matplotlib"
        ) from error
    return Figure, FigureCanvasAgg
