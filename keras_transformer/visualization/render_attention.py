"""One attention picture for one sentence pair: weights, choice, heatmap."""

import numpy as np

from keras_transformer.visualization.attention_heatmap import (
    check_heads,
    plot_attention,
)
from keras_transformer.visualization.attention_weights import (
    ATTENTION_KINDS,
    attention_weights,
)

# The names of the kinds in figure titles.
_KIND_TITLES = {
    "encoder": "encoder self-attention",
    "decoder": "decoder self-attention",
    "cross": "encoder-decoder attention",
}


def render_attention(
    model,
    source_ids,
    target_ids,
    source_tokens,
    target_tokens,
    path,
    kind="cross",
    layer=-1,
    heads=None,
    title=None,
):
    """Draws one layer's attention for one sentence pair to a PNG file.

    Computes every layer's weights with `attention_weights` (the model's own
    layers and masks, inference mode), picks one kind and layer, and draws the
    chosen heads with `plot_attention`. Rows are queries, columns are keys:

    - `"encoder"`: source x source (the paper's Figures 3-5 show encoder
      self-attention in layer 5 of 6);
    - `"decoder"`: target x target, zero above the diagonal (causal mask);
    - `"cross"`: target x source, which source words each target position
      reads (§3.2.3).

    Args:
        model: a `keras_transformer.Transformer`.
        source_ids: int sequence `[S]` (or `[1, S]`), one source sentence.
        target_ids: int sequence `[T]` (or `[1, T]`), the decoder input for it
            (the target shifted right, starting with bos).
        source_tokens: sequence of S strings, the labels of `source_ids`.
        target_tokens: sequence of T strings, the labels of `target_ids`.
        path: str or path-like. The PNG file to write.
        kind: str. One of `"encoder"`, `"decoder"`, `"cross"`. Defaults to
            `"cross"`.
        layer: int. Which layer, 0 the bottom one; negative counts from the top.
            Defaults to `-1`, the top layer.
        heads: optional int or sequence of ints, the heads to draw. Defaults
            to every head.
        title: optional str. Defaults to the kind, layer and heads.

    Returns:
        A tuple `(path, weights)`: the PNG path as a str and the plotted float32
        matrix `[len(heads), rows, columns]`.

    Examples:
        >>> from keras_transformer import Transformer
        >>> model = Transformer(source_vocab_size=20, num_layers=2, hidden_dim=8,
        ...                     intermediate_dim=16, num_heads=2)
        >>> path, weights = render_attention(
        ...     model, [5, 6, 7], [1, 5], ["a", "b", "c"], ["<s>", "A"],
        ...     "/tmp/cross.png", heads=[1])
        >>> weights.shape
        (1, 2, 3)
    """
    if kind not in ATTENTION_KINDS:
        raise ValueError(
            f"`kind` expected one of {list(ATTENTION_KINDS)}. Received: kind={kind!r}"
        )
    source_ids = _one_sentence("source_ids", source_ids)
    target_ids = _one_sentence("target_ids", target_ids)
    source_tokens = _labels("source_tokens", source_tokens, source_ids)
    target_tokens = _labels("target_tokens", target_tokens, target_ids)
    # The encoder may have more (or fewer) layers than the decoder.
    blocks = model.encoder_blocks if kind == "encoder" else model.decoder_blocks
    num_layers = len(blocks)
    if (
        isinstance(layer, bool)
        or not isinstance(layer, (int, np.integer))
        or not -num_layers <= layer < num_layers
    ):
        raise ValueError(
            f"`layer` expected an index in [{-num_layers}, {num_layers - 1}] (the "
            f"model has {num_layers} layers). Received: layer={layer!r}"
        )
    layer = int(layer) % num_layers
    heads = check_heads(heads, model.num_heads)

    # [B=1, H, R, C] -> [H, R, C]
    weights = attention_weights(model, source_ids[None], target_ids[None])
    weights = weights[kind][layer][0]
    rows = source_tokens if kind == "encoder" else target_tokens
    columns = target_tokens if kind == "decoder" else source_tokens
    if title is None:
        # 1-based, as the paper counts ("layer 5 of 6", Figure 3).
        title = f"{_KIND_TITLES[kind]}, layer {layer + 1} of {num_layers}"
    path = plot_attention(weights, rows, columns, path, heads=heads, title=title)
    # [H, R, C] -> [len(heads), R, C]
    return path, weights[heads]


def _one_sentence(name, ids):
    """`ids` as an int32 `[L]` array, or a `ValueError` naming its shape."""
    ids = np.asarray(ids)
    if ids.ndim == 2 and ids.shape[0] == 1:
        ids = ids[0]
    if ids.ndim != 1 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(
            f"`{name}` expected the int ids of one sentence, shape [length] or "
            f"[1, length]. Received: {name}.shape={ids.shape}, "
            f"{name}.dtype={ids.dtype}"
        )
    return ids.astype("int32")


def _labels(name, tokens, ids):
    tokens = [str(token) for token in tokens]
    if len(tokens) != len(ids):
        raise ValueError(
            f"`{name}` expected one token per id ({len(ids)}). "
            f"Received: len({name})={len(tokens)}"
        )
    return tokens
