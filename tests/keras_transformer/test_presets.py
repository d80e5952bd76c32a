import pytest

from keras_transformer import TransformerConfig
from keras_transformer.presets import PRESETS, TRAINING_FIELDS, training_values

# Table 3, one tuple per row: (N, d_model, d_ff, h, d_k, d_v, P_drop, eps_ls).
TABLE_3 = {
    "base": (6, 512, 2048, 8, 64, 64, 0.1, 0.1),
    "table3_A1": (6, 512, 2048, 1, 512, 512, 0.1, 0.1),
    "table3_A2": (6, 512, 2048, 4, 128, 128, 0.1, 0.1),
    "table3_A3": (6, 512, 2048, 16, 32, 32, 0.1, 0.1),
    "table3_A4": (6, 512, 2048, 32, 16, 16, 0.1, 0.1),
    "table3_B1": (6, 512, 2048, 8, 16, 64, 0.1, 0.1),
    "table3_B2": (6, 512, 2048, 8, 32, 64, 0.1, 0.1),
    "table3_C1": (2, 512, 2048, 8, 64, 64, 0.1, 0.1),
    "table3_C2": (4, 512, 2048, 8, 64, 64, 0.1, 0.1),
    "table3_C3": (8, 512, 2048, 8, 64, 64, 0.1, 0.1),
    "table3_C4": (6, 256, 2048, 8, 32, 32, 0.1, 0.1),
    "table3_C5": (6, 1024, 2048, 8, 128, 128, 0.1, 0.1),
    "table3_C6": (6, 512, 1024, 8, 64, 64, 0.1, 0.1),
    "table3_C7": (6, 512, 4096, 8, 64, 64, 0.1, 0.1),
    "table3_D1": (6, 512, 2048, 8, 64, 64, 0.0, 0.1),
    "table3_D2": (6, 512, 2048, 8, 64, 64, 0.2, 0.1),
    "table3_D3": (6, 512, 2048, 8, 64, 64, 0.1, 0.0),
    "table3_D4": (6, 512, 2048, 8, 64, 64, 0.1, 0.2),
    "table3_E": (6, 512, 2048, 8, 64, 64, 0.1, 0.1),
    "big": (6, 1024, 4096, 16, 64, 64, 0.3, 0.1),
}


@pytest.mark.parametrize("name", sorted(TABLE_3))
def test_table_3_rows(name):
    c = TransformerConfig.from_preset(name)
    row = (c.num_layers, c.d_model, c.d_ff, c.num_heads, c.key_dim, c.value_dim)
    eps_ls = training_values(name)["label_smoothing"]
    assert row + (c.dropout, eps_ls) == TABLE_3[name]
    expected_positions = "learned" if name == "table3_E" else "sinusoidal"
    assert c.position_encoding == expected_positions


def test_big_trains_300k_steps_and_base_100k():
    assert training_values("big")["train_steps"] == 300_000
    assert training_values("base")["train_steps"] == 100_000
    # Table 3: unlisted values are the base model's.
    assert training_values("table3_D4") == {
        "train_steps": 100_000,
        "label_smoothing": 0.2,
    }


def test_preset_training_entries_hold_only_training_fields():
    for name, preset in PRESETS.items():
        assert set(preset.get("training", {})) <= set(TRAINING_FIELDS), name
    assert set(PRESETS["base"]["training"]) == set(TRAINING_FIELDS)


def test_training_values_of_an_unknown_preset_name_it():
    with pytest.raises(ValueError, match="name='huge'"):
        training_values("huge")


def test_parsing_presets_follow_section_6_3():
    wsj = TransformerConfig.from_preset("parsing_wsj")
    semi = TransformerConfig.from_preset("parsing_semi_supervised")
    assert (wsj.num_layers, wsj.d_model, wsj.source_vocab_size) == (4, 1024, 16_000)
    assert semi.source_vocab_size == 32_000


def test_every_preset_is_listed_and_valid():
    assert TransformerConfig.preset_names() == list(PRESETS)
    assert set(TABLE_3) | {"parsing_wsj", "parsing_semi_supervised"} == set(PRESETS)
    for preset in PRESETS.values():
        assert preset["description"]
