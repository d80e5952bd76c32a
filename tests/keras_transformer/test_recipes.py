import dataclasses

import keras
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

from keras_transformer import build_transformer
from keras_transformer.decoding.decoding_config import DecodingConfig
from keras_transformer.presets import PRESETS
from keras_transformer.recipes import RECIPES, Recipe, get_recipe
from keras_transformer.runs.batching_plan import batching_config, plan_batches
from keras_transformer.runs.run_data import corpus, training_pairs
from keras_transformer.runs.run_tokenizer import (
    train_target_tokenizer,
    train_tokenizer,
)
from keras_transformer.runs.train import compile_recipe, train
from keras_transformer.workflows.export_run import translator_arguments
from pipelines import make_dataset

TABLE3 = sorted(name for name in RECIPES if "table3" in name)


def test_the_paper_recipes_state_the_papers_settings():
    base, big = get_recipe("wmt14_en_de_base"), get_recipe("wmt14_en_de_big")
    en_fr = get_recipe("wmt14_en_fr_big")
    for recipe in (base, big, en_fr):
        assert (recipe.tokens_per_batch, recipe.warmup_steps) == (25_000, 4_000)
        decoding = recipe.decoding
        assert (decoding.beam_size, decoding.alpha, decoding.max_extra_length) == (
            4,
            0.6,
            50,
        )
        assert recipe.effective_label_smoothing == 0.1
        assert recipe.checkpoint_every_minutes == 10
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
    recipe = get_recipe(
        "wmt14_en_de_big",
        warmup_steps=8000,
        **{"model.dropout": 0.2, "decoding.beam_size": 6, "decoding.alpha": 1.0},
    )
    assert recipe.warmup_steps == 8000
    assert recipe.model_config(100).dropout == 0.2
    assert recipe.model_config(100).d_model == 1024
    assert recipe.decoding == DecodingConfig(beam_size=6, alpha=1.0)
    assert Recipe.from_dict(recipe.to_dict()) == recipe


def test_a_record_of_another_version_names_its_fields():
    data = get_recipe("demo").to_dict()
    data["max_length"] = 96
    with pytest.raises(ValueError, match="max_length"):
        Recipe.from_dict(data)


def test_the_first_bucket_length_reaches_the_batches():
    """The recipe's first bucket is the batches' (the demo's 2, tensor2tensor's
    8 elsewhere); a run stored before the field reads as 8, its batches."""
    demo = get_recipe("demo")
    assert batching_config(demo, 1_024).bucket_lengths[:4] == [2, 3, 4, 5]
    assert batching_config(demo, 1_024).bucket_batch_sizes[:2] == [512, 341]
    base = get_recipe("wmt14_en_de_base")
    assert batching_config(base, 25_000).bucket_lengths[:3] == [8, 9, 10]
    stored = demo.to_dict()
    del stored["min_bucket_length"]
    assert Recipe.from_dict(stored).min_bucket_length == 8


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
        ({"label_smoothing": 1.0}, "label_smoothing=1.0"),
        ({"decoding.beam_size": 9}, "decoding.beam_size=9"),
        ({"decoding.alpha": -1.0}, "alpha=-1.0"),
        ({"decoding.beems": 2}, "beems"),
        ({"max_train_length": 300}, "max_train_length=300"),
        ({"min_bucket_length": 0}, "min_bucket_length=0"),
        ({"min_bucket_length": 257}, "min_bucket_length=257, max_train_length=256"),
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
    budget = {
        "tokens_per_batch": 256,
        "max_tokens_per_replica": 128,
        "max_train_length": 64,
    }
    recipe = recipe.with_overrides({**SHRINK, **model, **budget, "steps_per_epoch": 1})
    if recipe.task == "parsing":  # the bundled GUM dev trees, the shortest kept
        recipe = dataclasses.replace(
            recipe, data_source="bundled", dataset="gum", train_split="dev"
        )
    elif recipe.data_source == "bundled":
        recipe = dataclasses.replace(
            recipe, dataset="fixture", train_split="all", vocab_size=600
        )
    return recipe


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_every_recipe_takes_one_update_on_mock_data(name):
    recipe = _shrunk(RECIPES[name])
    keras.utils.set_random_seed(0)  # before the tokenizer (tensorflow-text quirk)
    with tfds.testing.mock_data(num_examples=40):
        texts = list(training_pairs(recipe, corpus(recipe, recipe.train_split)))
        pairs = tf.data.Dataset.from_tensor_slices(
            tuple(map(list, zip(*texts, strict=True)))
        )
        target = None
        if recipe.task == "parsing":  # words -> subwords, trees -> symbols
            target = train_target_tokenizer(recipe, texts)
            texts = [(source, "") for source, _ in texts]
        tokenizer = train_tokenizer(recipe, texts)
        tokens_per_step, accumulation = plan_batches(recipe, num_replicas=1)
        config = batching_config(recipe, tokens_per_step)
        batches = make_dataset(pairs, tokenizer, config, target_tokenizer=target)
        inputs, targets = next(iter(batches))
    target_vocab_size = target.vocab_size if target else None
    model = build_transformer(
        recipe.model_config(tokenizer.vocab_size, target_vocab_size)
    )
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


PAPER_LABEL_SMOOTHING = {"wmt14_en_de_table3_D3": 0.0, "wmt14_en_de_table3_D4": 0.2}
# The paper's step budgets (§5.2); the two offline demo recipes train a
# fixed, much smaller number of updates on two CPU cores (BUILD_NOTES.md).
PAPER_TRAIN_STEPS = {
    "wmt14_en_de_big": 300_000,
    "wmt14_en_fr_big": 300_000,
    "demo": 2_400,
    "gum_parsing": 3_800,
}

# The paper's names of the config and the Keras names the model stores them
# under, written out here (not read from the builder) so that a value the
# builder dropped or misrouted fails.
MODEL_FIELDS = {
    "num_layers": "num_layers",
    "num_encoder_layers": "num_encoder_layers",
    "d_model": "hidden_dim",
    "d_ff": "intermediate_dim",
    "num_heads": "num_heads",
    "d_k": "key_dim",
    "d_v": "value_dim",
    "dropout": "dropout",
    "attention_dropout": "attention_dropout",
    "relu_dropout": "activation_dropout",
    "position_encoding": "position_encoding",
    "max_position_length": "max_sequence_length",
    "shared_embeddings": "shared_embeddings",
    "tie_output_embeddings": "tie_output_embeddings",
    "normalize_first": "normalize_first",
    "layer_norm_epsilon": "layer_norm_epsilon",
    "source_vocab_size": "source_vocab_size",
}


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_every_preset_value_reaches_the_object_that_uses_it(name):
    recipe = RECIPES[name]
    preset = PRESETS[recipe.preset]
    # Training values, as the paper states them (Table 3 rows D3/D4 vary
    # eps_ls; the big models train 300K steps, §5.2): the compiled loss and
    # the step budget.
    expected_smoothing = PAPER_LABEL_SMOOTHING.get(name, 0.1)
    expected_steps = PAPER_TRAIN_STEPS.get(name, 100_000)
    assert recipe.total_train_steps == expected_steps
    # Model values: the full-size config, then a one-layer model built from a
    # copy that keeps every value but the sizes, so that it builds quickly.
    config = recipe.model_config(recipe.vocab_size)
    overrides = {**preset["model"], **dict(recipe.model_overrides)}
    for field, value in overrides.items():
        assert getattr(config, field) == value, field
    small = dataclasses.replace(
        config,
        num_layers=1,
        d_model=4 * config.num_heads,
        d_ff=8,
        d_k=None if config.d_k is None else 4,
        d_v=None if config.d_v is None else 4,
        source_vocab_size=64,
    )
    model = build_transformer(small)
    compile_recipe(model, recipe)
    stored = model.get_config()
    for field, key in MODEL_FIELDS.items():
        assert stored[key] == getattr(small, field), (field, key)
    assert model.loss.label_smoothing == expected_smoothing
    schedule = model.optimizer._learning_rate
    assert schedule.warmup_steps == recipe.warmup_steps
    assert schedule.scale == recipe.learning_rate_scale
    # Decoding: the export (and `translate --run-dir`) decode with the
    # recipe's DecodingConfig, inputs cut to its training length.
    arguments = translator_arguments(recipe)
    assert arguments["decoding"] is recipe.decoding
    assert arguments["max_input_length"] == recipe.max_train_length
    assert arguments["max_beam_size"] == recipe.max_beam_size


def test_table3_d3_and_d4_train_with_their_own_label_smoothing():
    # The defect this guards against: eps_ls in the model config, read by
    # nothing, while training took the recipe's 0.1.
    for name, eps_ls in (
        ("wmt14_en_de_table3_D3", 0.0),
        ("wmt14_en_de_table3_D4", 0.2),
    ):
        recipe = RECIPES[name]
        assert recipe.effective_label_smoothing == eps_ls
        model = build_transformer(
            dataclasses.replace(
                recipe.model_config(64), num_layers=1, d_model=16, d_ff=8
            )
        )
        compile_recipe(model, recipe)
        assert model.loss.label_smoothing == eps_ls
    # An explicit recipe value still wins over the preset's.
    assert (
        get_recipe(
            "wmt14_en_de_table3_D3", label_smoothing=0.05
        ).effective_label_smoothing
        == 0.05
    )


def test_recipe_tokenizers_are_the_registered_subword_kinds():
    import pipelines
    from keras_transformer import recipes

    # A recipe's tokenizer is the shared (source) one: a subword kind; the
    # whole-token "symbols" kind is parsing's target vocabulary (§6.3).
    subword = tuple(kind for kind in pipelines.TOKENIZER_KINDS if kind != "symbols")
    assert recipes.TOKENIZERS == subword


def test_the_model_side_special_ids_are_the_tokenizers():
    # keras_transformer may not import pipelines: the CLI, which wires both,
    # relies on the two definitions agreeing.
    import pipelines
    from keras_transformer import models

    assert (models.PAD_ID, models.BOS_ID, models.EOS_ID) == (
        pipelines.PAD_ID,
        pipelines.BOS_ID,
        pipelines.EOS_ID,
    )
    assert models.PAD_ID == 0
