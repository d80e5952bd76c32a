import pytest

from keras_transformer.decoding import DecodingConfig
from keras_transformer.recipes import get_recipe
from keras_transformer.workflows.export_run import _op_check, translator_arguments


def test_the_export_decodes_with_the_recipes_config():
    recipe = get_recipe("demo", **{"decoding.beam_size": 6, "decoding.alpha": 1.0})
    arguments = translator_arguments(recipe)
    assert arguments["decoding"] == DecodingConfig(beam_size=6, alpha=1.0)
    assert arguments["max_input_length"] == recipe.max_train_length == 96
    assert arguments["max_beam_size"] == recipe.max_beam_size == 8
    # `translate --run-dir` traces only up to its beam.
    assert translator_arguments(recipe, max_beam_size=6)["max_beam_size"] == 6


def test_a_greedy_recipe_exports_a_one_beam_search_and_sampling_is_refused():
    greedy = get_recipe("demo", **{"decoding.method": "greedy"})
    decoding = translator_arguments(greedy)["decoding"]
    assert (decoding.method, decoding.beam_size, decoding.n_best) == ("beam", 1, 1)
    sample = get_recipe("demo", **{"decoding.method": "sample"})
    with pytest.raises(ValueError, match="decoding.method='sample'"):
        translator_arguments(sample)


def test_tf_text_version_reaches_the_op_check():
    assert _op_check(None) == {}  # the export's default target release
    assert _op_check("none") == {"serving_tf_text_version": None}  # no check
    assert _op_check("2.18") == {"serving_tf_text_version": "2.18"}
