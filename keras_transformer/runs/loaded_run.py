"""A run directory's model with trained (or averaged) weights loaded: one
typed object (`LoadedRun`) for what every command that uses a trained run
reads together."""

import dataclasses
import os

from keras_transformer.models.builder import build_transformer
from keras_transformer.recipes import Recipe
from keras_transformer.runs.compute_dtypes import (
    COMPUTE_DTYPE_POLICIES,
    resolve_compute_dtype,
)
from keras_transformer.runs.run_directory import RunDirectory, exclusion_hint
from keras_transformer.runs.run_tokenizer import (
    load_run_tokenizer,
    load_target_tokenizer,
)
from keras_transformer.runs.user_error import MissingFileError, UserError
from keras_transformer.training import record_path
from keras_transformer.training.atomic_files import read_json
from keras_transformer.training.corrupt_file_error import (
    CorruptFileError,
    check_weights_file,
)
from keras_transformer.validation import check_one_of

# The class that uses each task's runs, for the message that refuses the other.
TASK_USERS = {"translation": "Translator", "parsing": "Parser"}


@dataclasses.dataclass(frozen=True)
class LoadedRun:
    """A trained run, loaded: its recipe, tokenizers and model with weights.

    Attributes:
        run: the `RunDirectory`.
        recipe: the run's `Recipe` (`recipe.json`).
        tokenizer: the source tokenizer (shared with the target for
            translation, §3.4).
        target_tokenizer: a parsing run's symbol vocabulary
            (`pipelines.SymbolTokenizer`, §6.3); `None` for translation.
        model: the `Transformer`, its weights loaded from `weights`.
        weights: str. The `.weights.h5` file loaded.
    """

    run: RunDirectory
    recipe: Recipe
    tokenizer: object
    target_tokenizer: object
    model: object
    weights: str

    @property
    def task(self):
        """`"translation"` or `"parsing"` (the recipe's)."""
        return self.recipe.task

    @property
    def output_tokenizer(self):
        """The tokenizer of the model's outputs: the target's for parsing,
        else the shared one."""
        return self.target_tokenizer or self.tokenizer


def load_run(run_dir, weights=None, task=None, compute_dtype="float32", seeded=True):
    """Loads a run's recipe, tokenizers and model with trained weights.

    Args:
        run_dir: str. The run directory.
        weights: str or `None`. A `.weights.h5` file; `None` takes the newest
            averaged weights, else the newest checkpoint
            (`RunDirectory.latest_weights`).
        task: str or `None`. The task the caller handles (`"translation"`
            or `"parsing"`); a run of the other task is refused naming the
            class that uses it. `None` accepts either.
        compute_dtype: str. `"float32"` (the default), `"bfloat16"` (see
            `COMPUTE_DTYPE_POLICIES`) or `"auto"` (`resolve_compute_dtype`:
            bfloat16 on a CPU with bfloat16 matmuls, as training's
            `precision="auto"`).
        seeded: bool. Seed Keras with the recipe's seed first (the default;
            evaluation's reproducible path). `Translator` and `Parser` load
            without: seeding frees the SentencePiece resources of tokenizers
            loaded before (`load_run_tokenizer`), so one translator would
            break another loaded earlier in the process.

    Returns:
        A `LoadedRun`.

    Raises:
        UserError: not a run directory, a run of the other task, weights or
            a tokenizer that do not fit the run.
        MissingFileError: the weights file (or the tokenizer) is missing.
        CorruptFileError: a damaged weights file, named.
    """
    compute_dtype = resolve_compute_dtype(compute_dtype)
    if task is not None:
        check_one_of("task", task, TASK_USERS)
    run = RunDirectory(run_dir)
    recipe = run.read_recipe()
    if task is not None and recipe.task != task:
        raise UserError(
            f"{run_dir} is a {recipe.task} run, not a {task} run: load it with "
            f"`{TASK_USERS[recipe.task]}` (`keras-transformer "
            f"{'parse' if recipe.task == 'parsing' else 'translate'}`). "
            f"Received: run_dir={run_dir!r}"
        )
    weights = weights or run.latest_weights()
    if not os.path.exists(weights):
        raise MissingFileError(f"No such weights file: {weights}")
    # Checked before anything loads: a corrupt file fails naming it.
    check_weights_file(weights, hint=exclusion_hint(weights))
    tokenizer = load_run_tokenizer(run, recipe.seed if seeded else None)
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
    load_fitting_weights(
        model, weights, f"{recipe.preset}, vocabulary {tokenizer.vocab_size}"
    )
    return LoadedRun(run, recipe, tokenizer, target_tokenizer, model, weights)


def load_fitting_weights(model, weights, model_name):
    """Loads the `.weights.h5` file `weights` into `model` (named
    `model_name` in the error): one that does not fit the model, or is
    damaged inside, fails in one line naming the file."""
    try:
        model.load_weights(weights, skip_mismatch=False)
    except (ValueError, KeyError) as error:
        raise UserError(
            f"{weights} does not fit the run's model ({model_name}): {error}"
        ) from None
    except OSError as error:  # damaged inside, past the header HDF5 checks
        raise CorruptFileError(
            weights,
            "a readable Keras .weights.h5 file",
            " ".join(str(error).split())[:200],
            exclusion_hint(weights),
        ) from None
