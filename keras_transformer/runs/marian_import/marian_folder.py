"""Reads a Hugging Face Marian folder (an OPUS-MT model as downloaded).

The folder is what `MarianMTModel.save_pretrained` and
`MarianTokenizer.save_pretrained` write: `config.json`, the weights
(`model.safetensors`, or the older `pytorch_model.bin`), the optional
`generation_config.json`, and the tokenizer's `source.spm`, `target.spm` and
`vocab.json`. Nothing is fetched: the user downloads the folder.

`model.safetensors` is read with the `safetensors` package alone (numpy, no
torch); a `pytorch_model.bin` (a pickle) needs torch, and its absence is an
error that says so. What our `Transformer` cannot represent is refused by
`check_marian_config`, naming the field.
"""

import dataclasses
import json
import os

import numpy as np

from keras_transformer.runs.user_error import MissingFileError, UserError

CONFIG = "config.json"
GENERATION_CONFIG = "generation_config.json"
SAFETENSORS = "model.safetensors"
PICKLE = "pytorch_model.bin"
TOKENIZER_FILES = ("source.spm", "target.spm", "vocab.json")
# Hugging Face's activation names -> `TransformerConfig.activation`.
ACTIVATIONS = {"relu": "relu", "gelu": "gelu", "swish": "swish", "silu": "swish"}
# Pre-norm and extra-norm switches of the BART family's configs: Marian's are
# all off, and our model has none of them in this form.
REFUSED_SWITCHES = (
    "normalize_before",
    "add_final_layer_norm",
    "layernorm_embedding",
    "normalize_embedding",
    "add_bias_logits",
)
# The generation fields read (from `config.json` in older folders).
GENERATION_FIELDS = (
    "num_beams",
    "max_length",
    "length_penalty",
    "bad_words_ids",
    "early_stopping",
    "renormalize_logits",
)
# Hugging Face's `early_stopping` -> `DecodingConfig.early_stopping`.
EARLY_STOPPING = (
    (False, "heuristic"),  # Hugging Face's default
    (True, "k_finished"),
    ("never", "exact"),
)
# Pairs of encoder and decoder fields our model has one value for.
SAME_IN_BOTH = (
    ("encoder_attention_heads", "decoder_attention_heads"),
    ("encoder_ffn_dim", "decoder_ffn_dim"),
)


@dataclasses.dataclass(frozen=True)
class MarianFolder:
    """A checked Hugging Face Marian folder.

    Attributes:
        path: str. The folder.
        config: dict. `config.json`.
        generation: dict. `generation_config.json` over the generation fields
            of `config.json` (older folders keep them there); `{}` if neither.
        weights_path: str. `model.safetensors` or `pytorch_model.bin`.
        tokenizer_config: dict. `tokenizer_config.json`, or `{}`.
        early_stopping: str. The `DecodingConfig.early_stopping` of the
            folder's `early_stopping` (Hugging Face's default, False, when
            absent: `"heuristic"`).
        pad_in_softmax: bool. Whether pad keeps its share of the softmax
            (`DecodingConfig.pad_in_softmax`): Hugging Face bans it with
            `bad_words_ids` after the softmax unless `renormalize_logits`.
    """

    path: str
    config: dict
    generation: dict
    weights_path: str
    tokenizer_config: dict
    early_stopping: str
    pad_in_softmax: bool

    def file(self, name: str) -> str:
        """The path of `name` inside the folder."""
        return os.path.join(self.path, name)

    def read_weights(self) -> dict:
        """`{name: float32 numpy array}`, names without the `model.` prefix."""
        if self.weights_path.endswith(".safetensors"):
            from safetensors.numpy import load_file

            try:
                tensors = load_file(self.weights_path)
            except Exception as error:  # noqa: BLE001 - any failure names the file
                raise UserError(
                    f"{self.weights_path} is not a readable safetensors file: {error}"
                ) from None
        else:
            tensors = _read_pickle(self.weights_path)
        return {
            name.removeprefix("model."): np.asarray(value, dtype=np.float32)
            for name, value in tensors.items()
        }


def read_marian_folder(path) -> MarianFolder:
    """Checks `path` and reads its configs (not yet the weights).

    Raises:
        MissingFileError: the folder or one of its files is missing.
        UserError: a config that is not Marian's, or a field our model
            cannot represent (`check_marian_config`).
    """
    path = os.fspath(path)
    if not os.path.isdir(path):
        raise MissingFileError(
            f"No such Hugging Face model folder: {path} (download it first, e.g. "
            "`huggingface-cli download Helsinki-NLP/opus-mt-en-de --local-dir DIR`)"
        )
    missing = [
        name
        for name in (CONFIG, *TOKENIZER_FILES)
        if not os.path.isfile(os.path.join(path, name))
    ]
    if missing:
        raise MissingFileError(
            f"{path} lacks {', '.join(missing)}: not a Hugging Face Marian folder."
        )
    weights = [
        os.path.join(path, name)
        for name in (SAFETENSORS, PICKLE)
        if os.path.isfile(os.path.join(path, name))
    ]
    if not weights:
        raise MissingFileError(
            f"{path} has no weights: expected {SAFETENSORS} or {PICKLE}."
        )
    config = _read_json(os.path.join(path, CONFIG))
    check_marian_config(config)
    generation = {key: config[key] for key in GENERATION_FIELDS if key in config}
    if os.path.isfile(os.path.join(path, GENERATION_CONFIG)):
        generation.update(_read_json(os.path.join(path, GENERATION_CONFIG)))
    tokenizer_config = {}
    if os.path.isfile(os.path.join(path, "tokenizer_config.json")):
        tokenizer_config = _read_json(os.path.join(path, "tokenizer_config.json"))
    if tokenizer_config.get("separate_vocabs"):
        raise UserError(
            "Separate source and target vocabularies (target_vocab.json) are not "
            "supported yet. Received: separate_vocabs=True in "
            f"{os.path.join(path, 'tokenizer_config.json')}"
        )
    return MarianFolder(
        path,
        config,
        generation,
        weights[0],
        tokenizer_config,
        early_stopping=_early_stopping(generation),
        pad_in_softmax=_pad_in_softmax(generation, config.get("pad_token_id")),
    )


def check_marian_config(config: dict) -> None:
    """Refuses, naming the field, a config our `Transformer` cannot represent."""
    model_type = config.get("model_type")
    if model_type != "marian":
        raise UserError(
            f"Only Marian models can be imported. Received: model_type={model_type!r}"
        )
    for name in REFUSED_SWITCHES:
        if config.get(name):
            raise UserError(
                f"Marian models are post-norm without extra norms; this config "
                f"is not. Received: {name}={config[name]!r}"
            )
    for first, second in SAME_IN_BOTH:
        if config.get(first) != config.get(second):
            raise UserError(
                "The encoder and the decoder must share this setting. Received: "
                f"{first}={config.get(first)!r}, {second}={config.get(second)!r}"
            )
    activation = config.get("activation_function", "gelu")
    if activation not in ACTIVATIONS:
        raise UserError(
            f"Unsupported activation; expected one of {sorted(ACTIVATIONS)}. "
            f"Received: activation_function={activation!r}"
        )
    if not config.get("share_encoder_decoder_embeddings", True):
        raise UserError(
            "Separate source and target embeddings are not supported yet. "
            "Received: share_encoder_decoder_embeddings=False"
        )
    if not config.get("tie_word_embeddings", True):
        raise UserError(
            "The output projection must be the embedding (§3.4). Received: "
            "tie_word_embeddings=False"
        )
    vocab_size = config.get("vocab_size")
    decoder_vocab_size = config.get("decoder_vocab_size") or vocab_size
    if decoder_vocab_size != vocab_size:
        raise UserError(
            "A shared vocabulary needs one size. Received: "
            f"vocab_size={vocab_size!r}, decoder_vocab_size={decoder_vocab_size!r}"
        )
    if config.get("d_model", 0) % max(config.get("encoder_attention_heads", 1), 1):
        raise UserError(
            "d_model must be divisible by the heads. Received: "
            f"d_model={config.get('d_model')!r}, "
            f"encoder_attention_heads={config.get('encoder_attention_heads')!r}"
        )


def _early_stopping(generation):
    """Hugging Face's `early_stopping` (default False) as ours."""
    value = generation.get("early_stopping", False)
    for theirs, ours in EARLY_STOPPING:
        # `is` for the bools (1 == True); "never" is a str.
        if value is theirs or (isinstance(value, str) and value == theirs):
            return ours
    raise UserError(
        'Unsupported early_stopping; expected false, true or "never". '
        f"Received: early_stopping={value!r}"
    )


def _pad_in_softmax(generation, pad_id):
    """Whether pad keeps its softmax share: Hugging Face bans it after the
    softmax (`bad_words_ids`) unless `renormalize_logits` (default False).

    Our searches ban pad and nothing else, so `bad_words_ids` may name pad
    only (OPUS-MT folders ban it; absent, pad is banned all the same).
    """
    banned = generation.get("bad_words_ids")
    if banned is not None and banned != [[pad_id]]:
        raise UserError(
            f"Unsupported bad_words_ids; only the pad id ({pad_id}) can be banned. "
            f"Received: bad_words_ids={banned!r}"
        )
    value = generation.get("renormalize_logits", False)
    if not isinstance(value, bool):
        raise UserError(
            "renormalize_logits must be true or false. Received: "
            f"renormalize_logits={value!r}"
        )
    return not value


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
    except (OSError, ValueError) as error:
        raise UserError(f"{path} is not readable JSON: {error}") from None
    if not isinstance(data, dict):
        raise UserError(
            f"{path} must hold a JSON object. Received: {type(data).__name__}"
        )
    return data


def _read_pickle(path):
    try:
        import torch
    except ImportError:
        raise UserError(
            f"{path} is a PyTorch pickle, which needs torch to read (`pip install "
            "torch`), or convert the folder to model.safetensors first."
        ) from None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # noqa: BLE001 - any failure names the file
        raise UserError(
            f"{path} is not a readable PyTorch state dict: {error}"
        ) from None
    return {name: value.float().numpy() for name, value in state.items()}
