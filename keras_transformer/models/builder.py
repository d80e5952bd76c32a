"""Builds the Transformer from a `TransformerConfig`: the only reader of configs,
and the one place where the config's paper names become the layers' Keras names."""

from keras_transformer.models.transformer import Transformer
from keras_transformer.transformer_config import TransformerConfig


def build_transformer(config: TransformerConfig, dtype=None, **kwargs) -> Transformer:
    """Returns the functional `Transformer` described by `config`.

    Args:
        config: a `TransformerConfig`, e.g. `TransformerConfig.from_preset("base")`.
        dtype: optional dtype policy (e.g. `"mixed_bfloat16"`); defaults to the
            global policy.
        **kwargs: `keras.Model` arguments (`name`, ...).

    Returns:
        A `Transformer` with inputs `source_ids` [B, S], `target_ids` [B, T] and
        float32 logits [B, T, V].

    Examples:
        >>> config = TransformerConfig.from_preset(
        ...     "base", num_layers=1, d_model=16, d_ff=32, num_heads=2,
        ...     source_vocab_size=50)
        >>> build_transformer(config).count_params()
        6368
    """
    return Transformer(
        source_vocab_size=config.source_vocab_size,
        target_vocab_size=config.output_vocab_size,
        num_layers=config.num_layers,
        num_encoder_layers=config.num_encoder_layers,
        hidden_dim=config.d_model,
        intermediate_dim=config.d_ff,
        num_heads=config.num_heads,
        key_dim=config.d_k,
        value_dim=config.d_v,
        dropout=config.dropout,
        attention_dropout=config.attention_dropout,
        activation_dropout=config.relu_dropout,
        position_encoding=config.position_encoding,
        max_sequence_length=config.max_position_length,
        shared_embeddings=config.shared_embeddings,
        tie_output_embeddings=config.tie_output_embeddings,
        normalize_first=config.normalize_first,
        layer_norm_epsilon=config.layer_norm_epsilon,
        activation=config.activation,
        sinusoid_layout=config.sinusoid_layout,
        scale_embeddings=config.scale_embeddings,
        output_bias=config.output_bias,
        next_word_pointer=config.next_word_pointer,
        next_word_pooling=config.next_word_pooling,
        next_word_window=config.next_word_window,
        encoder_word_window=config.encoder_word_window,
        dtype=dtype,
        **kwargs,
    )
