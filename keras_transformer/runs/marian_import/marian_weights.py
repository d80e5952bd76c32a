"""Marian's weights onto our `Transformer`: the model options and the map.

Marian's transformer is the paper's base model (§3) with a few differences,
each an option of our one model (BUILD_NOTES, "Deviations from the paper"):
swish (or gelu) in the feed-forward network, sines and cosines in halves
(`sinusoid_layout="halves"`), a bias on the logits (`output_bias`), LayerNorm
epsilon 1e-5, and the decoder starting from the pad embedding (our id 2 is a
copy of Marian's pad row: `pipelines.marian_vocabulary`). Attention and
feed-forward weights are PyTorch `Linear` matrices `[out, in]`, ours Keras
`EinsumDense` kernels `[in, heads, head_dim]` and `[heads, head_dim, out]`.
"""

import numpy as np

from keras_transformer.layers.sinusoidal_position_encoding import (
    SinusoidalPositionEncoding,
)
from keras_transformer.runs.marian_import.marian_folder import ACTIVATIONS
from keras_transformer.runs.user_error import UserError
from pipelines import BOS_ID

# PyTorch's LayerNorm default, which Marian's layers use.
LAYER_NORM_EPSILON = 1e-5
# Marian's module names -> ours, inside one layer.
ATTENTIONS = {"self_attn": "self_attention", "encoder_attn": "cross_attention"}
PROJECTIONS = {"q_proj": "query", "k_proj": "key", "v_proj": "value"}
NORMS = {
    "self_attn_layer_norm": "self_attention_norm",
    "encoder_attn_layer_norm": "cross_attention_norm",
    "final_layer_norm": "feed_forward_norm",
}
# The logit bias that keeps our bos out of every search.
NEVER_LOGIT = -1e4
EMBEDDINGS = (
    "shared.weight",
    "encoder.embed_tokens.weight",
    "decoder.embed_tokens.weight",
)


def model_overrides(config: dict) -> dict:
    """`TransformerConfig` fields (the recipe's `model_overrides`) of a
    checked Marian `config.json` (`check_marian_config`)."""
    encoder_layers = config["encoder_layers"]
    decoder_layers = config["decoder_layers"]
    return {
        "num_layers": decoder_layers,
        "num_encoder_layers": (
            None if encoder_layers == decoder_layers else encoder_layers
        ),
        "d_model": config["d_model"],
        "d_ff": config["decoder_ffn_dim"],
        "num_heads": config["decoder_attention_heads"],
        "d_k": None,
        "d_v": None,
        "dropout": float(config.get("dropout", 0.1)),
        "attention_dropout": float(config.get("attention_dropout", 0.0)),
        "relu_dropout": float(config.get("activation_dropout", 0.0)),
        "position_encoding": "sinusoidal",
        "max_position_length": config.get("max_position_embeddings", 512),
        "layer_norm_epsilon": LAYER_NORM_EPSILON,
        "activation": ACTIVATIONS[config.get("activation_function", "gelu")],
        "sinusoid_layout": "halves",
        "scale_embeddings": bool(config.get("scale_embedding", False)),
        "output_bias": True,
        "shared_embeddings": True,
        "tie_output_embeddings": True,
    }


def marian_weight_map(
    state: dict, marian_ids, num_encoder_layers, num_decoder_layers, num_heads
):
    """`{our weight path: numpy value}` from Marian's state dict.

    Args:
        state: `{name: array}`, names without the `model.` prefix
            (`MarianFolder.read_weights`).
        marian_ids: list of int. Marian's id of each of our ids
            (`pipelines.marian_vocabulary`): the embedding's and the logits
            bias' rows are taken in this order.
        num_encoder_layers, num_decoder_layers, num_heads: int.

    Raises:
        UserError: a tensor is missing, or the tied output projection or the
            position table differ from what our model computes.
    """
    state = dict(state)
    rows = np.asarray(marian_ids)
    embedding = _take_embedding(state)
    values = {"shared_embedding/embeddings": embedding[rows]}
    bias = state.pop("final_logits_bias", None)
    if bias is None:
        bias = np.zeros((1, embedding.shape[0]), np.float32)
    bias = bias.reshape(-1)[rows]
    # Our bos is Marian's pad row again, which Marian never generates
    # (Hugging Face bans it: `bad_words_ids`); our searches ban only pad, so
    # bos gets a logit no softmax keeps (exp(-1e4) is 0 in float32 and
    # bfloat16 alike).
    bias[BOS_ID] = NEVER_LOGIT
    values["shared_embedding/reverse_bias"] = bias
    for stack, count in (
        ("encoder", num_encoder_layers),
        ("decoder", num_decoder_layers),
    ):
        _check_positions(state, stack, embedding.shape[1])
        for i in range(count):
            values.update(
                _layer_values(
                    state, f"{stack}.layers.{i}.", f"{stack}_block_{i}", num_heads
                )
            )
    leftover = sorted(
        name
        for name in state
        if name.startswith(("encoder.layers.", "decoder.layers."))
    )
    if leftover:
        raise UserError(
            "The weights hold layers the config does not describe. Received: "
            f"{', '.join(leftover[:5])}"
        )
    return values


def assign_marian_weights(model, values: dict) -> None:
    """Assigns `values` (`marian_weight_map`) to every weight of `model`.

    Raises:
        UserError: a weight of `model` without a value, or a shape mismatch.
    """
    weights = {weight.path: weight for weight in model.weights}
    missing = sorted(set(weights) - set(values))
    if missing:
        raise UserError(
            "The Marian weights leave parts of the model unset. Received no value "
            f"for: {', '.join(missing[:5])}"
        )
    for path, value in values.items():
        weight = weights[path]
        if tuple(weight.shape) != value.shape:
            raise UserError(
                f"The Marian weight for {path} has shape {value.shape}; the model "
                f"needs {tuple(weight.shape)}."
            )
        weight.assign(value)


def _take_embedding(state):
    present = [name for name in EMBEDDINGS if name in state]
    if not present:
        raise UserError(
            "The weights hold no token embedding. Expected one of: "
            f"{', '.join(EMBEDDINGS)}"
        )
    embedding = state.pop(present[0])
    for name in present[1:] + ["lm_head.weight"]:
        other = state.pop(name, None)
        if other is not None and not np.array_equal(other, embedding):
            raise UserError(
                f"{name} differs from {present[0]}: the embeddings and the output "
                "projection must be one matrix (§3.4)."
            )
    return embedding


def _check_positions(state, stack, d_model):
    """Marian stores its sinusoid table; it must be the one we compute."""
    table = state.pop(f"{stack}.embed_positions.weight", None)
    if table is None:
        return
    # [1, P, D] -> [P, D], the table our layer computes
    expected = np.asarray(
        SinusoidalPositionEncoding(layout="halves", dtype="float32")(
            np.zeros((1, *table.shape), "float32")
        )
    )[0]
    if table.shape[1] != d_model or not np.allclose(table, expected, atol=1e-4):
        raise UserError(
            f"{stack}.embed_positions.weight is not Marian's sinusoid table: "
            "learned positions cannot be imported."
        )


def _linear(state, name):
    """A PyTorch Linear's `(weight [out, in], bias [out])`, popped."""
    try:
        return state.pop(f"{name}.weight"), state.pop(f"{name}.bias")
    except KeyError as error:
        raise UserError(f"The weights lack {error.args[0]}.") from None


def _layer_values(state, prefix, block, heads):
    values = {}
    for theirs, ours in ATTENTIONS.items():
        if not any(name.startswith(prefix + theirs + ".") for name in state):
            continue
        for projection, name in PROJECTIONS.items():
            weight, bias = _linear(state, f"{prefix}{theirs}.{projection}")
            # [out = H * d, in] -> [in, H, d]; [H * d] -> [H, d]
            values[f"{block}/{ours}/{name}/kernel"] = weight.T.reshape(
                weight.shape[1], heads, -1
            )
            values[f"{block}/{ours}/{name}/bias"] = bias.reshape(heads, -1)
        weight, bias = _linear(state, f"{prefix}{theirs}.out_proj")
        # [out, in = H * d] -> [H, d, out]
        values[f"{block}/{ours}/attention_output/kernel"] = weight.T.reshape(
            heads, -1, weight.shape[0]
        )
        values[f"{block}/{ours}/attention_output/bias"] = bias
    for theirs, ours in (("fc1", "intermediate_dense"), ("fc2", "output_dense")):
        weight, bias = _linear(state, f"{prefix}{theirs}")
        values[f"{block}/feed_forward/{ours}/kernel"] = weight.T
        values[f"{block}/feed_forward/{ours}/bias"] = bias
    for theirs, ours in NORMS.items():
        if f"{prefix}{theirs}.weight" in state:
            gamma, beta = _linear(state, f"{prefix}{theirs}")
            values[f"{block}/{ours}/gamma"] = gamma
            values[f"{block}/{ours}/beta"] = beta
    return values
