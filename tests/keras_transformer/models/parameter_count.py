"""The paper's parameter count (§3), by hand: the models' count is tested
against it, and the README's stated count is checked with it."""


def hand_count(vocab, n, d, d_ff, h, d_k, d_v, n_encoder=None):
    """Parameters of §3 with a shared, tied embedding (no output bias); N
    encoder and N decoder layers, or `n_encoder` encoder layers."""
    attention = d * h * d_k * 2 + h * d_k * 2 + d * h * d_v + h * d_v + h * d_v * d + d
    feed_forward = d * d_ff + d_ff + d_ff * d + d
    norm = 2 * d
    encoder_layer = attention + feed_forward + 2 * norm
    decoder_layer = 2 * attention + feed_forward + 3 * norm
    n_encoder = n if n_encoder is None else n_encoder
    return vocab * d + n_encoder * encoder_layer + n * decoder_layer


def config_count(config):
    """`hand_count` of a `TransformerConfig` with a shared vocabulary."""
    return hand_count(
        config.source_vocab_size,
        config.num_layers,
        config.d_model,
        config.d_ff,
        config.num_heads,
        config.key_dim,
        config.value_dim,
        config.num_encoder_layers,
    )
