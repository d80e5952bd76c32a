"""Converts a trained run's weights into a CTranslate2 model (the peer of
benchmarks/ctranslate2_peer.py), without TensorFlow, Keras or this package.

`convert_run(run_dir, weights, model_dir)` reads the weights with h5py, the
tokenizer artefact and the recipe as JSON, and writes a CTranslate2 model
(float32) with the SentencePiece model and the run's input and output length
limits beside it. How the model maps (paper §3;
`keras_transformer/models/transformer.py`), as
`ctranslate2.specs.TransformerSpec.from_config(num_layers, num_heads,
pre_norm=normalize_first)`:

- **Embeddings** (§3.4): the one shared `[V, D]` matrix is the encoder's and
  the decoder's embedding and the pre-softmax projection (no bias, as
  `keras.layers.ReversibleEmbedding` has none; its separate `[D, V]` matrix,
  transposed, without `tie_output_embeddings`); both stacks scale lookups by
  sqrt(d_model) (`scale_embeddings`).
- **Positions** (§3.5): ours interleave sines and cosines (feature 2i is
  sin(pos / 10000^(2i/D)), 2i+1 its cosine); CTranslate2's generated
  encoding puts all sines before all cosines and spaces its frequencies by
  log(10000) / (D/2 - 1), so both stacks get ours as an explicit table
  (`position_encodings.encodings`) of `positions_for(...)` rows.
- **Attention**: the separate query, key and value `EinsumDense` kernels
  `[D, H, D/H]` (and biases `[H, D/H]`) become CTranslate2's fused linear
  `[3D, D]` (self-attention) or query `[D, D]` plus key-value `[2D, D]`
  (cross-attention), transposed to `[out, in]`; heads stay contiguous, so
  the head split is the same. The output kernel `[H, D/H, D]` becomes
  `[D, D]`, transposed. Both scale queries by 1/sqrt(D/H).
- **Blocks**: pre-norm `x + Sublayer(LayerNorm(x))` with a final LayerNorm
  per stack (`normalize_first`, read from the weights), or post-norm;
  layer-norm epsilon from the recipe (1e-6 by default); ReLU feed-forward
  kernels transposed. Layer counts and heads come from the weights' shapes.
- **Special ids**: the SentencePiece pieces in id order are the shared
  vocabulary, so ids agree: `<pad>` 0, `<unk>` 1, `<s>` 2 (bos, the
  decoder's first input), `</s>` 3 (eos). CTranslate2 adds neither bos nor
  eos to sources: the caller appends eos, as `encode_sources` does.

Learned positions, separate source and target vocabularies and the parsing
layers (next-word pointer, word-distance bias) are refused, as is any layer
in the weights that the mapping does not consume.
"""

import base64
import json
import os

# Our special ids (`keras_transformer.models.special_ids`, which this module
# may not import), and the pieces the tokenizer artefacts give them.
PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
UNK_PIECE, BOS_PIECE, EOS_PIECE = "<unk>", "<s>", "</s>"
# The `Transformer` defaults a recipe's `model_overrides` may change.
LAYER_NORM_EPSILON = 1e-6
MAX_WAVELENGTH = 10000
# What the converted model directory holds besides CTranslate2's files.
SENTENCEPIECE_FILE = "sentencepiece.model"
SETTINGS_FILE = "keras_transformer_run.json"


def latest_weights(run_dir):
    """The run's newest averaged weights, else its newest checkpoint
    (`RunDirectory.latest_weights`)."""
    averaged = os.path.join(run_dir, "averaged")
    if os.path.isdir(averaged):
        names = [
            os.path.join(averaged, n)
            for n in os.listdir(averaged)
            if n.startswith("avg-") and n.endswith(".weights.h5")
        ]
        if names:
            return max(names, key=os.path.getmtime)
    checkpoints = os.path.join(run_dir, "checkpoints")
    if os.path.isdir(checkpoints):
        names = sorted(
            n
            for n in os.listdir(checkpoints)
            if n.startswith("ckpt-") and n.endswith(".weights.h5")
        )
        if names:
            return os.path.join(checkpoints, names[-1])
    raise ValueError(f"No averaged weights or checkpoints in {run_dir}; pass --weights")


def read_recipe(run_dir):
    """The run's `recipe.json`, checked for a task and tokenizer that map
    (the architecture is checked on the weights, `transformer_spec`)."""
    with open(os.path.join(run_dir, "recipe.json"), encoding="utf-8") as handle:
        recipe = json.load(handle)
    if recipe.get("task", "translation") != "translation":
        raise ValueError(f"Only translation runs map. Received: task={recipe['task']}")
    if recipe.get("tokenizer") != "sentencepiece":
        raise ValueError(
            "Only SentencePiece runs map. "
            f"Received: tokenizer={recipe.get('tokenizer')!r}"
        )
    return recipe


def read_sentencepiece_model(run_dir):
    """The serialized SentencePiece model of the run's tokenizer artefact
    (`pipelines.tokenizers.tokenizer_artifact`)."""
    with open(os.path.join(run_dir, "tokenizer.model"), encoding="utf-8") as handle:
        record = json.load(handle)
    if record.get("kind") != "sentencepiece":
        raise ValueError(
            f"Not a SentencePiece tokenizer. Received: kind={record.get('kind')!r}"
        )
    return base64.b64decode(record["payload"])


def read_keras_weights(path):
    """The arrays of a Keras 3 `.weights.h5`, by our layer paths.

    Keras names a model's layers in the file after their classes, numbered
    in the model's order (`transformer_encoder_block_1`); leaf layers record
    their own name (`shared_embedding`) on their `vars` group. Returns
    `{"encoder_block_1/self_attention/query_dense": [kernel, bias], ...}`,
    each list in the layer's creation order.
    """
    import h5py  # noqa: PLC0415 (the conversion's alone)

    blocks = {
        "transformer_encoder_block": "encoder_block",
        "transformer_decoder_block": "decoder_block",
    }
    weights = {}

    def visit(name, group):
        if not isinstance(group, h5py.Group) or name.split("/")[-1] != "vars":
            return
        if not len(group):
            return
        parts = name.split("/")[:-1]
        top = parts[0]
        base, _, number = top.rpartition("_")
        if top in blocks:
            parts[0] = f"{blocks[top]}_0"
        elif base in blocks and number.isdigit():
            parts[0] = f"{blocks[base]}_{number}"
        elif len(parts) == 1:
            parts[0] = group.attrs["name"]
        weights["/".join(parts)] = [group[str(i)][()] for i in range(len(group))]

    with h5py.File(path, "r") as handle:
        handle["layers"].visititems(visit)
    return weights


def sinusoidal_encodings(num_positions, depth, max_wavelength=MAX_WAVELENGTH):
    """`[num_positions, depth]` float32, `SinusoidalPositionEncoding`'s
    layout: sin(pos / w^(2i/D)) at feature 2i, its cosine at 2i + 1."""
    import numpy as np  # noqa: PLC0415

    positions = np.arange(num_positions, dtype="float32")
    # 1 / w^(2i / D) for i in [0, D/2)
    inverse_frequencies = np.power(
        np.float32(max_wavelength),
        -np.arange(0, depth, 2, dtype="float32") / np.float32(depth),
    )
    # [P, 1] * [1, D/2] -> [P, D/2]
    angles = positions[:, None] * inverse_frequencies[None, :]
    # [P, D/2, 2] -> [P, D]: sin at even features, cos at odd ones
    return np.stack([np.sin(angles), np.cos(angles)], -1).reshape(num_positions, depth)


def positions_for(max_input_length, max_extra_length):
    """Rows of the position table: enough for the longest source (eos
    included) and its longest output, and at least CTranslate2's default
    input limit, 1024 (a position past the table has no encoding)."""
    return max(1024, max_input_length + max_extra_length + 1)


def transformer_spec(weights, vocabulary, layer_norm_epsilon, num_positions):
    """A `ctranslate2.specs.TransformerSpec` holding `read_keras_weights`'
    arrays (see the module docstring), its vocabulary `vocabulary` (our
    pieces in id order) on both sides.

    Raises:
        ValueError: the weights hold a layer this mapping does not know.
    """
    import numpy as np  # noqa: PLC0415
    from ctranslate2 import specs  # noqa: PLC0415

    weights = dict(weights)

    def take(path):
        return [np.asarray(w, "float32") for w in weights.pop(path)]

    def count(prefix):
        return len({p.split("/")[0] for p in weights if p.startswith(prefix)})

    num_encoder_layers = count("encoder_block_")
    num_decoder_layers = count("decoder_block_")
    # EinsumDense query kernel [D, H, D/H]
    depth, num_heads, key_dim = weights["encoder_block_0/self_attention/query_dense"][
        0
    ].shape
    if num_heads * key_dim != depth:
        raise ValueError(
            "CTranslate2 needs key and value sizes of d_model / num_heads. "
            f"Received: d_model={depth}, num_heads={num_heads}, key_dim={key_dim}"
        )
    pre_norm = "encoder_final_norm" in weights
    spec = specs.TransformerSpec.from_config(
        (num_encoder_layers, num_decoder_layers), num_heads, pre_norm=pre_norm
    )
    if "shared_embedding" not in weights:
        raise ValueError("Only a shared source-target embedding maps")
    (embedding, *reverse) = take("shared_embedding")  # [V, D]; [D, V] if untied
    vocab_size = embedding.shape[0]
    if len(vocabulary) != vocab_size:
        raise ValueError(
            f"The tokenizer has {len(vocabulary)} pieces, the embedding "
            f"{vocab_size} rows"
        )
    encodings = sinusoidal_encodings(num_positions, depth)
    spec.encoder.embeddings[0].weight = embedding
    spec.decoder.embeddings.weight = embedding
    spec.encoder.scale_embeddings = spec.decoder.scale_embeddings = True
    spec.encoder.position_encodings.encodings = encodings
    spec.decoder.position_encodings.encodings = encodings
    # logits = x E^T: CTranslate2's weight is [out, in] = [V, D]
    spec.decoder.projection.weight = (
        np.ascontiguousarray(reverse[0].T) if reverse else embedding
    )

    def linear(linear_spec, *dense_paths, input_axes=1):
        # Each kernel [D_in..., out...] -> [D_in, out] -> [out, D_in] (the
        # attention output's [H, D/H, D] has two input axes); fused
        # projections are stacked on the output axis.
        kernels, biases = [], []
        for path in dense_paths:
            kernel, bias = take(path)
            inputs = int(np.prod(kernel.shape[:input_axes]))
            kernels.append(kernel.reshape(inputs, -1).T)
            biases.append(bias.reshape(-1))
        linear_spec.weight = np.ascontiguousarray(np.concatenate(kernels, 0))
        linear_spec.bias = np.concatenate(biases, 0)

    def layer_norm(norm_spec, path):
        norm_spec.gamma, norm_spec.beta = take(path)

    def attention(attention_spec, prefix, fused_query):
        dense = [f"{prefix}/{n}_dense" for n in ("query", "key", "value")]
        if fused_query:
            linear(attention_spec.linear[0], *dense)  # [3D, D]
        else:
            linear(attention_spec.linear[0], dense[0])  # [D, D]
            linear(attention_spec.linear[1], *dense[1:])  # [2D, D]
        linear(attention_spec.linear[-1], f"{prefix}/output_dense", input_axes=2)

    def feed_forward(ffn_spec, prefix):
        layer_norm(ffn_spec.layer_norm, f"{prefix}/feed_forward_norm")
        linear(ffn_spec.linear_0, f"{prefix}/feed_forward/intermediate_dense")
        linear(ffn_spec.linear_1, f"{prefix}/feed_forward/output_dense")

    for i, layer in enumerate(spec.encoder.layer):
        prefix = f"encoder_block_{i}"
        layer_norm(layer.self_attention.layer_norm, f"{prefix}/self_attention_norm")
        attention(layer.self_attention, f"{prefix}/self_attention", True)
        feed_forward(layer.ffn, prefix)
    for i, layer in enumerate(spec.decoder.layer):
        prefix = f"decoder_block_{i}"
        layer_norm(layer.self_attention.layer_norm, f"{prefix}/self_attention_norm")
        attention(layer.self_attention, f"{prefix}/self_attention", True)
        layer_norm(layer.attention.layer_norm, f"{prefix}/cross_attention_norm")
        attention(layer.attention, f"{prefix}/cross_attention", False)
        feed_forward(layer.ffn, prefix)
    if pre_norm:
        layer_norm(spec.encoder.layer_norm, "encoder_final_norm")
        layer_norm(spec.decoder.layer_norm, "decoder_final_norm")
    if weights:
        raise ValueError(f"Layers this mapping does not know: {sorted(weights)}")

    spec.config.unk_token = UNK_PIECE
    spec.config.bos_token = BOS_PIECE
    spec.config.eos_token = EOS_PIECE
    spec.config.decoder_start_token = BOS_PIECE
    spec.config.add_source_bos = False
    spec.config.add_source_eos = False  # appended with the length cut
    spec.config.layer_norm_epsilon = layer_norm_epsilon
    spec.register_source_vocabulary(vocabulary)
    spec.register_target_vocabulary(vocabulary)
    spec.validate()
    return spec


def convert_run(run_dir, weights_path, model_dir):
    """Writes the run's CTranslate2 model (float32 weights) to `model_dir`,
    with its SentencePiece model and decoding settings beside it."""
    import sentencepiece  # noqa: PLC0415

    recipe = read_recipe(run_dir)
    overrides = recipe.get("model_overrides") or {}
    payload = read_sentencepiece_model(run_dir)
    processor = sentencepiece.SentencePieceProcessor(model_proto=payload)
    specials = (
        processor.pad_id(),
        processor.unk_id(),
        processor.bos_id(),
        processor.eos_id(),
    )
    if specials != (PAD_ID, UNK_ID, BOS_ID, EOS_ID):
        raise ValueError(f"Unexpected special ids {specials}")
    vocabulary = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    max_input_length = recipe["max_train_length"]
    max_extra_length = recipe["decoding"]["max_extra_length"]
    spec = transformer_spec(
        read_keras_weights(weights_path),
        vocabulary,
        overrides.get("layer_norm_epsilon", LAYER_NORM_EPSILON),
        positions_for(max_input_length, max_extra_length),
    )
    os.makedirs(model_dir, exist_ok=True)
    spec.save(model_dir)
    with open(os.path.join(model_dir, SENTENCEPIECE_FILE), "wb") as handle:
        handle.write(payload)
    with open(os.path.join(model_dir, SETTINGS_FILE), "w", encoding="utf-8") as f:
        json.dump(
            {
                "max_input_length": max_input_length,
                "max_extra_length": max_extra_length,
            },
            f,
        )
    return recipe
