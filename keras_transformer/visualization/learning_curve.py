"""A run's learning curve as a PNG: training loss and dev BLEU (or parsing's
dev F1) against updates."""

from keras_transformer.visualization.attention_heatmap import (
    matplotlib_classes,
    save_figure,
)

# The dev score drawn on the right axis, the first a row has.
DEV_LABELS = {
    "dev_bleu": "dev BLEU (sacreBLEU)",
    "dev_f1": "dev F1 (labelled brackets, EVALB)",
}


def plot_learning_curve(rows, path, title=None, dpi=100):
    """Draws training loss and, where present, dev BLEU (or dev F1) per step
    to a PNG.

    Loss (left axis) and dev BLEU or F1 (right axis) share the x axis of
    updates; a
    second x axis on top gives the minutes of training at the same points,
    read from the rows (so a run that slowed down shows it).

    Args:
        rows: list of dicts with `step`, `minutes`, `loss` and optionally
            `dev_bleu` or `dev_f1` (`LearningCurveLog` rows,
            `read_learning_curve`).
        path: str or path-like. The PNG file; parent folders are created.
        title: optional str.
        dpi: int. Defaults to `100`.

    Returns:
        `path` as a str.

    Raises:
        ValueError: no rows, or rows without `step`, `minutes` and `loss`.
    """
    rows = list(rows)
    if not rows or not all({"step", "minutes", "loss"} <= set(row) for row in rows):
        raise ValueError(
            "`rows` expected at least one dict with step, minutes and loss. "
            f"Received: rows={rows[:3]!r}"
        )
    steps = [row["step"] for row in rows]
    minutes = [row["minutes"] for row in rows]
    figure_class, canvas_class = matplotlib_classes()
    figure = figure_class(figsize=(7.0, 4.2), layout="constrained")
    canvas_class(figure)
    loss_axis = figure.subplots()
    loss_axis.plot(steps, [row["loss"] for row in rows], "o-", color="tab:blue")
    loss_axis.set_xlabel("updates")
    loss_axis.set_ylabel(
        "training loss (label-smoothed cross-entropy)", color="tab:blue"
    )
    for key, label in DEV_LABELS.items():
        scored = [row for row in rows if key in row]
        if scored:
            score_axis = loss_axis.twinx()
            score_axis.plot(
                [row["step"] for row in scored],
                [row[key] for row in scored],
                "s-",
                color="tab:orange",
            )
            score_axis.set_ylabel(label, color="tab:orange")
            break
    # Minutes on top, at the logged steps (monotonic in steps).
    minutes_axis = loss_axis.secondary_xaxis(
        "top",
        functions=(
            lambda x: _interpolate(x, steps, minutes),
            lambda x: _interpolate(x, minutes, steps),
        ),
    )
    minutes_axis.set_xlabel("minutes of training")
    loss_axis.grid(alpha=0.3)
    return save_figure(figure, path, title, dpi)


def _interpolate(x, xs, ys):
    """Piecewise-linear through (0, 0) and the points, extended at the ends'
    slopes (an axis transform must be defined, and invertible, everywhere)."""
    import numpy as np

    xs = np.asarray([0.0, *xs], "float64")
    ys = np.asarray([0.0, *ys], "float64")
    x = np.asarray(x, "float64")
    if xs[-1] <= 0 or ys[-1] <= 0:
        return x
    y = np.interp(x, xs, ys)
    slope = (ys[-1] - ys[-2]) / (xs[-1] - xs[-2]) if xs[-1] > xs[-2] else 0.0
    slope = slope if slope > 0 else ys[-1] / xs[-1]
    y = np.where(x > xs[-1], ys[-1] + (x - xs[-1]) * slope, y)
    first = ys[1] / xs[1] if xs[1] > 0 else 1.0
    return np.where(x < 0, x * first, y)
