import dataclasses

import pytest
import tensorflow_datasets as tfds

from keras_transformer.cli.train import train
from keras_transformer.recipes import RECIPES, Recipe, get_recipe, plan_batches

TABLE3 = sorted(name for name in RECIPES if "table3" in name)


def test_the_paper_recipes_state_the_papers_settings():
    base, big = get_recipe("wmt14_en_de_base"), get_recipe("wmt14_en_de_big")
    en_fr = get_recipe("wmt14_en_fr_big")
    for recipe in (base, big, en_fr):
        assert (recipe.tokens_per_batch, recipe.warmup_steps) == (25_000, 4_000)
        assert (recipe.beam_size, recipe.alpha, recipe.max_extra_length) == (4, 0.6, 50)
        assert recipe.label_smoothing == 0.1 and recipe.checkpoint_every_minutes == 10
        assert recipe.data_source == "tfds"
    assert (base.vocab_size, base.average_last, base.total_train_steps) == (
        37_000,
        5,
        100_000,
    )
    assert (big.average_last, big.total_train_steps) == (20, 300_000)
    assert big.model_config(37_000).dropout == 0.3
    assert en_fr.model_config(32_000).dropout == 0.1  # §6.1
    assert (en_fr.dataset, en_fr.target_language, en_fr.vocab_size) == (
        "wmt14_translate/fr-en",
        "fr",
        32_000,
    )
    assert len(TABLE3) == 18  # rows A-E; the "big" row is wmt14_en_de_big
    for name in TABLE3:
        recipe = RECIPES[name]
        assert recipe.test_split == "validation"  # newstest2013, §6.2
        assert recipe.average_last == 1  # "no checkpoint averaging"
        assert recipe.preset == name.removeprefix("wmt14_en_de_")


@pytest.mark.parametrize(
    "replicas, expected", [(8, (25_000, 1)), (4, (12_500, 2)), (1, (3_125, 8))]
)
def test_fewer_devices_accumulate_to_the_papers_batch(replicas, expected):
    assert plan_batches(get_recipe("wmt14_en_de_base"), replicas) == expected


def test_overrides_and_round_trip():
    recipe = get_recipe("wmt14_en_de_big", warmup_steps=8000, **{"model.dropout": 0.2})
    assert recipe.warmup_steps == 8000
    assert recipe.model_config(100).dropout == 0.2
    assert recipe.model_config(100).d_model == 1024
    assert Recipe.from_dict(recipe.to_dict()) == recipe


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"preset": "huge"}, "preset='huge'"),
        ({"data_source": "web"}, "data_source='web'"),
        ({"model.d_modle": 3}, "d_modle"),
        ({"average_last": 9}, "average_last=9"),
        ({"train_minutes": 0}, "train_minutes=0"),
    ],
)
def test_bad_overrides_name_the_value(overrides, message):
    with pytest.raises((ValueError, TypeError), match=message):
        get_recipe("wmt14_en_de_base", **overrides)


def test_unknown_recipe():
    with pytest.raises(ValueError, match="recipe='nope'"):
        get_recipe("nope")


# One update of every recipe on TFDS mock data (the bundled corpus for the
# demo): data source, tokenizer, batching plan, model preset, compile and
# checkpoint all run. The models are shrunk to d_model 16 (keeping each
# recipe's heads, d_k/d_v, positions and dropout) so that 22 recipes train in
# about a minute; the full-size configurations are checked above and their
# parameter counts in tests/keras_transformer/models/test_builder.py.
SHRINK = {"tokenizer_sample_pairs": 50, "vocab_size": 400, "train_steps": 1}


def _shrunk(recipe):
    config = recipe.model_config(400)
    heads = config.num_heads
    model = {
        "model.num_layers": 1,
        "model.d_ff": 16,
        "model.d_model": 4 * heads,
        "model.d_k": 4 if config.d_k is not None else None,
        "model.d_v": 4 if config.d_v is not None else None,
    }
    budget = {"tokens_per_batch": 256, "max_tokens_per_replica": 128, "max_length": 64}
    return recipe.with_overrides({**SHRINK, **model, **budget, "steps_per_epoch": 1})


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_every_recipe_trains_one_update_on_mock_data(name, tmp_path):
    recipe = _shrunk(RECIPES[name])
    if recipe.data_source == "bundled":
        recipe = dataclasses.replace(
            recipe, dataset="fixture", train_split="all", vocab_size=600
        )
    with tfds.testing.mock_data(num_examples=40):
        result = train(recipe, str(tmp_path), verbose=0)
    # 256 tokens per update in 2 accumulated batches of 128: one update.
    assert result["steps"] == 1
    assert [p.name for p in (tmp_path / "checkpoints").glob("*.h5")] == [
        "ckpt-00000001.weights.h5"
    ]
