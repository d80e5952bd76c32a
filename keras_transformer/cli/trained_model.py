"""A run directory's model with trained (or averaged) weights loaded."""

import json
import os

from keras_transformer.cli.run_directory import RunDirectory
from keras_transformer.cli.run_tokenizer import load_run_tokenizer
from keras_transformer.cli.user_error import UserError
from keras_transformer.models.builder import build_transformer
from keras_transformer.training import record_path


def load_trained_model(run_dir, weights=None):
    """Returns `(recipe, tokenizer, model, weights_path)` of a run.

    Args:
        run_dir: str. The run directory.
        weights: str or `None`. A `.weights.h5` file; `None` takes the newest
            averaged weights, else the newest checkpoint.
    """
    run = RunDirectory(run_dir)
    recipe = run.read_recipe()
    tokenizer = load_run_tokenizer(run, recipe.seed)
    weights = weights or run.latest_weights()
    if not os.path.exists(weights):
        raise UserError(f"No such weights file: {weights}")
    weights_record = record_path(weights)
    if os.path.exists(weights_record):
        with open(weights_record) as f:
            fingerprint = json.load(f).get("tokenizer_fingerprint")
        if fingerprint not in (None, tokenizer.fingerprint):
            raise UserError(
                f"{weights} was trained with tokenizer {fingerprint}, but the run's "
                f"tokenizer is {tokenizer.fingerprint}: mismatched checkpoint."
            )
    model = build_transformer(recipe.model_config(tokenizer.vocab_size))
    try:
        model.load_weights(weights, skip_mismatch=False)
    except (ValueError, KeyError) as error:
        raise UserError(
            f"{weights} does not fit the run's model "
            f"({recipe.preset}, vocabulary {tokenizer.vocab_size}): {error}"
        ) from None
    return recipe, tokenizer, model, weights
