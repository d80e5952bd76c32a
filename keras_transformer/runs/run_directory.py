"""The layout of a run directory, shared by every subcommand.

```
<run_dir>/recipe.json        the resolved recipe (written by prepare/train)
<run_dir>/tokenizer.model    the tokenizer artefact (pipelines)
<run_dir>/target_tokenizer.model  parsing: the whole-token target symbols
<run_dir>/data/sources.json  the data files: paths, lines, sizes, SHA-256
<run_dir>/data/train/        tokenized training cache: shard-NNNNN.tfrecord,
                             its counts (.json), shards.json when complete
<run_dir>/data/filter_report.json  pairs kept and skipped by reason (last)
<run_dir>/backup/            resume state (fit_resumable)
<run_dir>/checkpoints/       ckpt-<step>.weights.h5 + .json, the last K
<run_dir>/logs/              TensorBoard
<run_dir>/averaged/          avg-<steps>.weights.h5 + .json (average)
<run_dir>/eval/              <split>.json scores, <split>.txt translations
<run_dir>/export/<version>/  the SavedModel (export)
<run_dir>/imported/          model.weights.h5 + .json of an imported model
                             (import-marian)
<run_dir>/xla_cache/, .lock  XLA's training cache; the run lock
```
"""

import dataclasses
import glob
import os

from keras_transformer.recipes import Recipe
from keras_transformer.runs.user_error import UserError
from keras_transformer.training import list_checkpoints
from keras_transformer.training.atomic_files import atomic_write_json, read_json
from keras_transformer.training.corrupt_file_error import CorruptFileError

# Recipe fields a run may change between invocations; the others fix the data,
# tokenizer or model, so a run directory refuses a recipe that differs in them.
MUTABLE_FIELDS = (
    "description",
    "train_steps",
    "train_minutes",
    "precision",
    "average_last",
    "decoding",
    "max_beam_size",
    "checkpoint_every_minutes",
    "checkpoint_every_steps",
    "keep_checkpoints",
    "dev_files",
    "test_files",
)

# The fields an imported model's run keeps when it takes its first training
# data (`data_source` "none" -> "files": fine-tuning, `train --train`); its
# training settings (batching, schedule, languages...) come with that data.
IMPORTED_MODEL_FIELDS = (
    "name",
    "task",
    "preset",
    "model_overrides",
    "tokenizer",
    "vocab_size",
)


@dataclasses.dataclass(frozen=True)
class RunDirectory:
    """Paths of one training run (see the module docstring)."""

    path: str

    def join(self, *parts):
        return os.path.join(self.path, *parts)

    @property
    def recipe_path(self):
        return self.join("recipe.json")

    @property
    def tokenizer_path(self):
        return self.join("tokenizer.model")

    @property
    def target_tokenizer_path(self):
        """Parsing runs: the target's whole-token symbol vocabulary (§6.3)."""
        return self.join("target_tokenizer.model")

    @property
    def sources_path(self):
        """The record of the run's data files (`runs.source_files`)."""
        return self.join("data", "sources.json")

    @property
    def cache_dir(self):
        """The tokenized training cache (`runs.training_cache`)."""
        return self.join("data", "train")

    @property
    def filter_report_path(self):
        """Written last by `prepare`: the run is prepared when it exists."""
        return self.join("data", "filter_report.json")

    @property
    def checkpoint_dir(self):
        return self.join("checkpoints")

    @property
    def averaged_dir(self):
        return self.join("averaged")

    @property
    def export_dir(self):
        return self.join("export")

    @property
    def imported_weights(self):
        """An imported model's weights (`runs.marian_import`), with its
        `.json` record beside it."""
        return self.join("imported", "model.weights.h5")

    def read_recipe(self):
        """The recipe stored in the run directory."""
        if not os.path.exists(self.recipe_path):
            raise UserError(
                f"{self.path} is not a run directory (no recipe.json); run "
                "`keras-transformer prepare` or `train` first."
            )
        data = read_json(self.recipe_path)  # a corrupt file fails naming it
        try:
            return Recipe.from_dict(data)
        except (TypeError, ValueError, AttributeError, KeyError) as error:
            raise CorruptFileError(
                self.recipe_path,
                "a recipe this version can read",
                " ".join(str(error).split()),
                "restore it, or use a new run directory",
            ) from None

    def fixed_field_changes(self, recipe):
        """`"field old -> new, ..."` for the fields `recipe` changes in the
        stored one that a run may not change (not in `MUTABLE_FIELDS`; for an
        imported run taking its first training data, the
        `IMPORTED_MODEL_FIELDS`); `""` if none or no run yet."""
        return _fixed_changes(*self._stored_and_new(recipe))

    def write_recipe(self, recipe):
        """Stores `recipe` after `check_recipe`."""
        self.check_recipe(recipe)
        os.makedirs(self.path, exist_ok=True)
        atomic_write_json(recipe.to_dict(), self.recipe_path)

    def check_recipe(self, recipe):
        """Refuses `recipe`, naming each difference, where it changes a
        fixed field of the stored one (`fixed_field_changes`)."""
        old, new = self._stored_and_new(recipe)
        details = _fixed_changes(old, new)
        if details and _imported_taking_data(old, new):
            raise UserError(
                f"{self.path} holds an imported model, which keeps its model "
                f"and tokenizer ({details}): leave those options out to "
                "fine-tune it, or import into a new --run-dir."
            )
        if details:
            raise UserError(
                f"{self.path} holds a run with other settings ({details}); "
                "a run may change only "
                f"{', '.join(f for f in MUTABLE_FIELDS if f != 'description')}"
                ". Leave the other options out to continue this run, or "
                "give a new --run-dir to start a new one."
            )

    def changed_fields(self, recipe):
        """`"field old -> new, ..."` for the fields a run may change
        (`MUTABLE_FIELDS`) that `recipe` changes in the stored one (`""` if
        none or no run yet); `write_recipe` refuses a change of the others."""
        old, new = self._stored_and_new(recipe)
        return ", ".join(
            f"{key} {old.get(key)!r} -> {new[key]!r}"
            for key in MUTABLE_FIELDS
            if key in new and new[key] != old.get(key)
        )

    def _stored_and_new(self, recipe):
        """`(stored, new)` recipe dicts; both empty when no run is stored."""
        if not os.path.exists(self.recipe_path):
            return {}, {}
        return self.read_recipe().to_dict(), recipe.to_dict()

    def checkpoints(self):
        """Training checkpoints, oldest first."""
        return list_checkpoints(self.checkpoint_dir)

    def latest_weights(self):
        """The newest averaged weights, else the newest checkpoint, else an
        imported model's weights."""
        averaged = sorted(
            glob.glob(os.path.join(self.averaged_dir, "avg-*.weights.h5")),
            key=os.path.getmtime,
        )
        if averaged:
            return averaged[-1]
        checkpoints = self.checkpoints()
        if not checkpoints and os.path.exists(self.imported_weights):
            return self.imported_weights
        if not checkpoints:
            raise UserError(
                f"No checkpoints in {self.checkpoint_dir}; train first "
                "(`keras-transformer train`)."
            )
        return checkpoints[-1]


def _imported_taking_data(old, new):
    """Whether recipe dict `new` gives the imported run `old` its first
    training data (`data_source` "none" -> another)."""
    return old.get("data_source") == "none" and new.get("data_source") != "none"


def _fixed_changes(old, new):
    """`fixed_field_changes` of recipe dicts `old` (stored) and `new`."""
    if _imported_taking_data(old, new):
        fixed = set(IMPORTED_MODEL_FIELDS)
    else:
        fixed = set(new) - set(MUTABLE_FIELDS)
    changed = sorted(key for key in fixed if new.get(key) != old.get(key))
    return ", ".join(f"{k}={old.get(k)!r} -> {new[k]!r}" for k in changed)


def exclusion_hint(path):
    """How to leave a corrupt weights file out: move it and its record away
    (the run's commands then take the next newest), or name another one."""
    return (
        f"move it and its .json record out of {os.path.dirname(path) or '.'} "
        "to leave it out (the next newest are used), or name other weights "
        "with --weights"
    )
