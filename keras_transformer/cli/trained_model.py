"""A run directory's model with trained (or averaged) weights loaded."""

import os

from keras_transformer.cli.compute_dtypes import COMPUTE_DTYPE_POLICIES
from keras_transformer.cli.run_directory import RunDirectory, exclusion_hint
from keras_transformer.cli.run_tokenizer import (
    load_run_tokenizer,
    load_target_tokenizer,
)
from keras_transformer.cli.user_error import UserError
from keras_transformer.models.builder import build_transformer
from keras_transformer.training import record_path
from keras_transformer.training.atomic_files import read_json
from keras_transformer.training.corrupt_file_error import (
    CorruptFileError,
    check_weights_file,
)
from keras_transformer.validation import check_one_of

# What each task's runs are used with, for the message that refuses the other.
TASK_COMMANDS = {"translation": "translate", "parsing": "parse"}


def load_trained_model(
    run_dir, weights=None, task="translation", compute_dtype="float32"
):
    """Returns `(recipe, tokenizer, model, weights_path)` of a run.

    Args:
        run_dir: str. The run directory.
        weights: str or `None`. A `.weights.h5` file; `None` takes the newest
            averaged weights, else the newest checkpoint.
        task: str or `None`. The task the caller handles; a run of another
            task is refused naming its command. `None` accepts any.
        compute_dtype: str. `"float32"` (the default) or `"bfloat16"` (see
            `COMPUTE_DTYPE_POLICIES`).
    """
    check_one_of("compute_dtype", compute_dtype, COMPUTE_DTYPE_POLICIES)
    run = RunDirectory(run_dir)
    recipe = run.read_recipe()
    if task is not None and recipe.task != task:
        raise UserError(
            f"{run_dir} is a {recipe.task} run; use `keras-transformer "
            f"{TASK_COMMANDS[recipe.task]}` (and `evaluate`) with it."
        )
    weights = weights or run.latest_weights()
    if not os.path.exists(weights):
        raise UserError(f"No such weights file: {weights}")
    # Checked before anything loads: a corrupt file fails naming it.
    check_weights_file(weights, hint=exclusion_hint(weights))
    tokenizer = load_run_tokenizer(run, recipe.seed)
    weights_record = record_path(weights)
    if os.path.exists(weights_record):
        fingerprint = read_json(weights_record).get("tokenizer_fingerprint")
        if fingerprint not in (None, tokenizer.fingerprint):
            raise UserError(
                f"{weights} was trained with tokenizer {fingerprint}, but the run's "
                f"tokenizer is {tokenizer.fingerprint}: mismatched checkpoint."
            )
    target_tokenizer = load_target_tokenizer(run, recipe)
    target_vocab_size = target_tokenizer.vocab_size if target_tokenizer else None
    model = build_transformer(
        recipe.model_config(tokenizer.vocab_size, target_vocab_size),
        dtype=COMPUTE_DTYPE_POLICIES[compute_dtype],
    )
    try:
        model.load_weights(weights, skip_mismatch=False)
    except (ValueError, KeyError) as error:
        raise UserError(
            f"{weights} does not fit the run's model "
            f"({recipe.preset}, vocabulary {tokenizer.vocab_size}): {error}"
        ) from None
    except OSError as error:  # damaged inside, past the header HDF5 checks
        raise CorruptFileError(
            weights,
            "a readable Keras .weights.h5 file",
            " ".join(str(error).split())[:200],
            exclusion_hint(weights),
        ) from None
    return recipe, tokenizer, model, weights
