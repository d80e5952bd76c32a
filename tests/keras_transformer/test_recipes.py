import dataclasses

import keras
import numpy as np
import pytest
import tensorflow_datasets as tfds

from keras_transformer import build_transformer
from keras_transformer.cli.data import load_pairs, train_tokenizer
from keras_transformer.cli.prepare import batching_config
from keras_transformer.cli.run_directory import RunDirectory
from keras_transformer.cli.train import compile_recipe, train
from keras_transformer.recipes import RECIPES, Recipe, get_recipe, plan_batches
from pipelines import make_dataset

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
        ({"train_minutes": "none"}, "train_minutes='none'"),
        ({"bucket_scale": True}, "bucket_scale=True"),
    ],
)
def test_bad_overrides_name_the_value(overrides, message):
    with pytest.raises(ValueError, match=message):
        get_recipe("wmt14_en_de_base", **overrides)


def test_unknown_recipe():
    with pytest.raises(ValueError, match="recipe='nope'"):
        get_recipe("nope")


# Every recipe on TFDS mock data (the bundled fixture for the demo): its data
# source, tokenizer, batching plan, model preset and compiled recipe take one
# update. The models are shrunk to d_model 4 x heads (keeping each recipe's
# heads, d_k/d_v, positions, dropout and normalisation) and updated eagerly,
# so that 22 recipes run in about a minute; the full-size configurations are
# checked above and their parameter counts in
# tests/keras_transformer/models/test_builder.py. Two
# recipes also go through the whole `train` command path (prepare, resumable
# fit, checkpoints), one of them with gradient accumulation.
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
    recipe = recipe.with_overrides({**SHRINK, **model, **budget, "steps_per_epoch": 1})
    if recipe.data_source == "bundled":
        recipe = dataclasses.replace(
            recipe, dataset="fixture", train_split="all", vocab_size=600
        )
    return recipe


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_every_recipe_takes_one_update_on_mock_data(name):
    recipe = _shrunk(RECIPES[name])
    keras.utils.set_random_seed(0)  # before the tokenizer (tensorflow-text quirk)
    with tfds.testing.mock_data(num_examples=40):
        pairs = load_pairs(recipe, recipe.train_split)
        tokenizer = train_tokenizer(recipe, pairs)
        tokens_per_step, accumulation = plan_batches(recipe, num_replicas=1)
        config = dataclasses.replace(
            batching_config(recipe, RunDirectory("unused"), tokens_per_step),
            cache=False,
        )
        inputs, targets = next(iter(make_dataset(pairs, tokenizer, config)))
    model = build_transformer(recipe.model_config(tokenizer.vocab_size))
    compile_recipe(model, recipe)
    # Eagerly: the same update without tracing a train-step graph per recipe
    # (9 s of each recipe's 11 s); the `train` path tests below run graphs.
    model.run_eagerly = True
    before = [w.numpy().copy() for w in model.trainable_weights]
    logs = model.train_on_batch(inputs, targets, return_dict=True)
    assert np.isfinite(logs["loss"])
    assert any(
        not np.array_equal(b, w.numpy())
        for b, w in zip(before, model.trainable_weights, strict=True)
    )
    assert accumulation == 2  # 256 tokens per update over 128-token batches


@pytest.mark.parametrize("name", ["demo", "wmt14_en_fr_big"])
def test_the_train_command_path_makes_one_update(name, tmp_path):
    recipe = _shrunk(RECIPES[name])
    with tfds.testing.mock_data(num_examples=40):
        result = train(recipe, str(tmp_path), verbose=0)
    # 256 tokens per update in 2 accumulated batches of 128: one update.
    assert result["steps"] == 1
    assert [p.name for p in (tmp_path / "checkpoints").glob("*.h5")] == [
        "ckpt-00000001.weights.h5"
    ]
