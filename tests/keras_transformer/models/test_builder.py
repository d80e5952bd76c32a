import pytest

from keras_transformer import TransformerConfig, build_transformer
from tests.keras_transformer.models.parameter_count import config_count, hand_count


@pytest.mark.parametrize(
    "preset,paper_rounded,expected_millions",
    [("base", 65, 63.1), ("big", 213, 214.2)],
)
def test_parameter_counts_with_a_shared_37000_token_vocabulary(
    preset, paper_rounded, expected_millions
):
    config = TransformerConfig.from_preset(preset, source_vocab_size=37_000)
    count = config_count(config)  # base 63,082,496; big 214,245,376
    assert abs(count / 1e6 - expected_millions) / expected_millions < 0.005
    # The built model has the hand count's layout: one layer per side and a
    # 40-token vocabulary (the count is linear in both), not 63M or 214M
    # parameters allocated to be counted.
    small = TransformerConfig.from_preset(preset, source_vocab_size=40, num_layers=1)
    assert build_transformer(small).count_params() == config_count(small)


def test_builder_passes_every_field():
    config = TransformerConfig.from_preset(
        "table3_B1",
        num_layers=1,
        num_encoder_layers=2,
        d_model=32,
        d_ff=48,
        source_vocab_size=40,
        target_vocab_size=50,
        shared_embeddings=False,
        position_encoding="learned",
        max_position_length=20,
        normalize_first=True,
        attention_dropout=0.05,
        relu_dropout=0.15,
    )
    model = build_transformer(config, name="variant")
    assert model.name == "variant"
    assert (len(model.encoder_blocks), len(model.decoder_blocks)) == (2, 1)
    block = model.encoder_blocks[0]
    assert (block.num_heads, block.key_dim, block.value_dim) == (8, 16, None)
    assert block.self_attention.value_dim == 4  # d_model / h
    assert (block.attention_dropout, block.activation_dropout) == (0.05, 0.15)
    assert block.dropout == 0.1 and block.normalize_first
    assert model.source_embedding.input_dim == 40
    assert model.target_embedding.input_dim == 50
    assert model.encoder_position.sequence_length == 20
    assert model.count_params() == hand_count(0, 1, 32, 48, 8, 16, 4, n_encoder=2) + (
        40 * 32 + 50 * 32 + 2 * 20 * 32 + 2 * 2 * 32
    )
