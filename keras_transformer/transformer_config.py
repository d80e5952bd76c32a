"""The Transformer's hyperparameters, with the paper's base model as defaults."""

import dataclasses

from keras_transformer.layers.next_word_pointer import POOLINGS, check_word_windows
from keras_transformer.layers.sinusoidal_position_encoding import SINUSOID_LAYOUTS
from keras_transformer.presets import PRESETS
from keras_transformer.validation import (
    check_dataclass_fields,
    check_one_of,
    check_positive_int,
    check_rate,
)

POSITION_ENCODINGS = ("sinusoidal", "learned")
# The feed-forward activations a config can name: the paper's, and those of
# the models `runs.marian_import` reads (Keras' gelu is the exact one, as
# Marian's and Hugging Face's `gelu`; swish is x * sigmoid(x)).
ACTIVATIONS = ("relu", "gelu", "swish")
# pad, unk, bos, eos: the smallest vocabulary that can hold one real token.
MIN_VOCAB_SIZE = 4


@dataclasses.dataclass(frozen=True)
class TransformerConfig:
    """Hyperparameters of the Transformer, defaulting to the base model.

    It holds only what builds the model; training settings (label smoothing,
    train steps) belong to the recipe, and a preset's training values are in
    its `training` entry (`presets.training_values`). Field names follow the
    paper (Table 3 columns); `build_transformer` is the one place that maps
    them to the layers' Keras-style names (`d_model` -> `hidden_dim`, `d_ff` ->
    `intermediate_dim`, `relu_dropout` -> `activation_dropout`,
    `max_position_length` -> `max_sequence_length`). Variants are derived with
    `TransformerConfig.from_preset(name, **overrides)` or `dataclasses.replace`.
    Only builders read a config; layers take plain arguments.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), Table 3.
        - [Kasai et al., 2021. Deep Encoder, Shallow Decoder: Reevaluating
          Non-autoregressive Machine Translation](https://arxiv.org/abs/2006.10369)
          (`num_encoder_layers`).
        - [Liu, Zhu & Shi, 2018. Improving Sequence-to-Sequence Constituency Parsing](
          https://doi.org/10.1609/aaai.v32i1.11917), AAAI 2018 (`next_word_pointer`).

    Examples:
        >>> config = TransformerConfig.from_preset("big", source_vocab_size=32000)
        >>> (config.d_model, config.key_dim, config.dropout)
        (1024, 64, 0.3)
    """

    num_layers: int = 6  # N, encoder and decoder layers each (§3.1)
    # Encoder layers when they differ from N (a deep encoder and shallow
    # decoder, Kasai et al. 2021; not in the paper); None = num_layers.
    num_encoder_layers: int | None = None
    d_model: int = 512  # model size, all sub-layer outputs (§3.1)
    d_ff: int = 2048  # inner size of the feed-forward network (§3.3)
    num_heads: int = 8  # h, attention heads (§3.2.2)
    d_k: int | None = None  # query/key size per head; None = d_model / h
    d_v: int | None = None  # value size per head; None = d_model / h
    dropout: float = 0.1  # P_drop, residual and embedding dropout (§5.4)
    attention_dropout: float = 0.0  # on attention weights; not in the paper
    relu_dropout: float = 0.0  # inside the FFN; not in the paper
    position_encoding: str = "sinusoidal"  # or "learned" (Table 3 row E)
    source_vocab_size: int = 37_000  # shared BPE vocabulary of §5.1 (En-De)
    target_vocab_size: int | None = None  # None = source_vocab_size
    shared_embeddings: bool = True  # one matrix for both embeddings (§3.4)
    tie_output_embeddings: bool = True  # pre-softmax projection = embedding (§3.4)
    # Positions of the learned table (Table 3 row E) and the longest sequence
    # the model accepts: the model's `max_sequence_length`; tensor2tensor's 256.
    max_position_length: int = 256
    normalize_first: bool = False  # pre-norm instead of the paper's post-norm
    layer_norm_epsilon: float = 1e-6  # tensor2tensor's LayerNorm epsilon
    # Options of models trained elsewhere (Marian / OPUS-MT, imported by
    # `runs.marian_import`), off by default; none is in the paper:
    activation: str = "relu"  # the FFN's activation (§3.3), or gelu, swish
    sinusoid_layout: str = "interleaved"  # or "halves", Marian's (§3.5)
    scale_embeddings: bool = True  # embeddings times sqrt(d_model) (§3.4)
    output_bias: bool = False  # a learned bias on the logits
    # Parsing (§6.3): the decoder sees the encoder output at the next word to
    # cover (`NextWordPointer`; Liu, Zhu & Shi 2018); not in the paper.
    next_word_pointer: bool = False
    # The pointer's vector of a word: its first subword, or the mean of its
    # subwords (`NextWordPointer`'s `pooling`).
    next_word_pooling: str = "first"
    # The pointer's cross-attention bias by word distance from the next word,
    # distances -W..W (`NextWordPointer`'s `distance_window`); 0 is off.
    next_word_window: int = 0
    # The encoder's self-attention bias by word distance between pieces'
    # words, -W..W (`Transformer`'s `encoder_word_window`); 0 is off.
    encoder_word_window: int = 0

    def __post_init__(self):
        for name in (
            "num_layers",
            "d_model",
            "d_ff",
            "num_heads",
            "source_vocab_size",
            "max_position_length",
        ):
            check_positive_int(name, getattr(self, name))
        for name in ("d_k", "d_v", "target_vocab_size", "num_encoder_layers"):
            check_positive_int(name, getattr(self, name), allow_none=True)
        for name in ("dropout", "attention_dropout", "relu_dropout"):
            check_rate(name, getattr(self, name))
        if (self.d_k is None or self.d_v is None) and self.d_model % self.num_heads:
            raise ValueError(
                "d_model must be divisible by num_heads when d_k or d_v is derived "
                f"from it. Received: d_model={self.d_model}, "
                f"num_heads={self.num_heads}"
            )
        check_one_of("position_encoding", self.position_encoding, POSITION_ENCODINGS)
        check_one_of("activation", self.activation, ACTIVATIONS)
        check_one_of("sinusoid_layout", self.sinusoid_layout, SINUSOID_LAYOUTS)
        check_one_of("next_word_pooling", self.next_word_pooling, POOLINGS)
        check_word_windows(
            self.next_word_pointer,
            self.next_word_pooling,
            next_word_window=self.next_word_window,
            encoder_word_window=self.encoder_word_window,
        )
        if self.position_encoding == "sinusoidal" and self.d_model % 2:
            raise ValueError(
                "Sinusoidal positions need an even d_model. "
                f"Received: d_model={self.d_model}"
            )
        for name in ("source_vocab_size", "target_vocab_size"):
            value = getattr(self, name)
            if value is not None and value < MIN_VOCAB_SIZE:
                raise ValueError(
                    f"`{name}` must be at least {MIN_VOCAB_SIZE} (pad, unk, bos, "
                    f"eos). Received: {name}={value}"
                )
        if (
            self.shared_embeddings
            and self.target_vocab_size is not None
            and self.target_vocab_size != self.source_vocab_size
        ):
            raise ValueError(
                "Shared embeddings need one vocabulary. Received: "
                f"source_vocab_size={self.source_vocab_size}, "
                f"target_vocab_size={self.target_vocab_size}"
            )

    @property
    def key_dim(self) -> int:
        """d_k, derived as d_model / h when not set (§3.2.2)."""
        return self.d_k or self.d_model // self.num_heads

    @property
    def value_dim(self) -> int:
        """d_v, derived as d_model / h when not set (§3.2.2)."""
        return self.d_v or self.d_model // self.num_heads

    @property
    def output_vocab_size(self) -> int:
        """The target vocabulary size V."""
        return self.target_vocab_size or self.source_vocab_size

    @classmethod
    def from_preset(cls, name: str, **overrides) -> "TransformerConfig":
        """Returns a named preset (see `presets.PRESETS`) with `overrides` applied.

        Args:
            name: str. `"base"`, `"big"`, `"table3_A1"` ... `"table3_E"`,
                `"parsing_wsj"` or `"parsing_semi_supervised"`.
            **overrides: field values that replace the preset's.

        Raises:
            ValueError: for an unknown preset or field name, or invalid values.
        """
        if name not in PRESETS:
            raise ValueError(
                f"Unknown preset. Received: name={name!r}. "
                f"Available: {', '.join(sorted(PRESETS))}"
            )
        check_dataclass_fields(cls, overrides)
        return dataclasses.replace(cls(), **{**PRESETS[name]["model"], **overrides})

    @classmethod
    def preset_names(cls) -> list[str]:
        """Names accepted by `from_preset`."""
        return list(PRESETS)

    def to_dict(self) -> dict:
        """A JSON-ready dict of the fields (for records beside checkpoints)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "TransformerConfig":
        """The inverse of `to_dict`."""
        return cls(**values)
