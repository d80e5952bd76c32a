import dataclasses

import pytest

from keras_transformer import TransformerConfig


def test_defaults_are_the_base_model():
    config = TransformerConfig()
    assert (config.num_layers, config.d_model, config.d_ff, config.num_heads) == (
        6,
        512,
        2048,
        8,
    )
    assert (config.key_dim, config.value_dim) == (64, 64)
    assert config.dropout == 0.1
    assert config.position_encoding == "sinusoidal"
    assert config.output_vocab_size == config.source_vocab_size == 37_000


def test_from_preset_applies_overrides_last():
    config = TransformerConfig.from_preset("big", dropout=0.1, source_vocab_size=32_000)
    assert (config.d_model, config.num_heads, config.dropout) == (1024, 16, 0.1)
    assert config.source_vocab_size == 32_000


def test_frozen_and_derived_with_replace():
    config = TransformerConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.d_model = 1
    assert dataclasses.replace(config, num_heads=4).key_dim == 128


def test_dict_round_trip():
    config = TransformerConfig.from_preset("table3_B1")
    assert TransformerConfig.from_dict(config.to_dict()) == config


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"d_model": 500, "num_heads": 8 * 3}, "d_model=500, num_heads=24"),
        ({"dropout": -0.1}, "dropout=-0.1"),
        ({"source_vocab_size": 3}, "source_vocab_size=3"),
        ({"target_vocab_size": 2, "shared_embeddings": False}, "target_vocab_size=2"),
        ({"target_vocab_size": 100}, "target_vocab_size=100"),
        ({"num_layers": 0}, "num_layers=0"),
        ({"position_encoding": "rotary"}, "position_encoding='rotary'"),
        ({"next_word_pooling": "max"}, "next_word_pooling='max'"),
        ({"next_word_window": -1}, "next_word_window=-1"),
        ({"next_word_window": 2}, "next_word_window=2, next_word_pointer=False"),
        (
            {"next_word_window": 2, "next_word_pointer": True},
            "next_word_pooling='first'",
        ),
        ({"encoder_word_window": 3}, "encoder_word_window=3, next_word_pointer"),
        ({"d_model": 7, "num_heads": 1}, "d_model=7"),
    ],
)
def test_bad_values_name_what_was_received(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TransformerConfig(**kwargs)


def test_d_model_need_not_divide_when_both_head_sizes_are_given():
    config = TransformerConfig(d_model=500, num_heads=24, d_k=16, d_v=16)
    assert config.key_dim == 16


def test_unknown_preset_and_field():
    with pytest.raises(ValueError, match="name='huge'.*Available: base, big"):
        TransformerConfig.from_preset("huge")
    with pytest.raises(ValueError, match="d_modle"):
        TransformerConfig.from_preset("base", d_modle=512)


def test_the_model_config_holds_no_training_settings():
    # Label smoothing and train steps are the recipe's (presets' "training").
    fields = {field.name for field in dataclasses.fields(TransformerConfig)}
    assert not fields & {"label_smoothing", "train_steps", "max_length"}
    assert "max_position_length" in fields
