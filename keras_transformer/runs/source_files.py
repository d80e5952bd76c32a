"""The record of a run's data files (`data/sources.json`): the first step of
`prepare` for a "files" recipe.

Each file's path, line count, size, modification time and SHA-256 are
recorded when the run is first prepared, after the line counts of every part
have been checked (a mismatch fails before any other work). Every later
`prepare` or `train` (which prepares first) checks the training files against
the record and refuses a run whose files changed, as it refuses a changed
recipe: the tokenizer and the cache were made from the recorded content. A
file whose size and modification time are unchanged is taken as unchanged;
otherwise it is fingerprinted again, so a copy or a `touch` is accepted and
an edit of the same size is not. Held-out files may change (`dev_files` and
`test_files` are mutable): their record is refreshed.
"""

import os

from keras_transformer.runs.run_data import corpus
from keras_transformer.runs.user_error import UserError
from keras_transformer.training.atomic_files import atomic_write_json, read_json


def record_sources(recipe, run):
    """Checks and records the data files of a "files" recipe (see the module
    docstring); other data sources have nothing to record.

    Returns:
        The record, `{"train"|"dev"|"test": [[FileSummary dict, ...], ...]}`
        (one list per corpus part), or `None`.

    Raises:
        UserError: a line-count mismatch, an empty or missing file, or
            training files that changed since the run was prepared.
    """
    if recipe.data_source != "files":
        return None
    splits = {"train": recipe.train_split}
    splits.update(
        (name, getattr(recipe, f"{name}_split"))
        for name in ("dev", "test")
        if getattr(recipe, f"{name}_files")
    )
    recorded = read_json(run.sources_path) if os.path.exists(run.sources_path) else {}
    record = {}
    for name, split in splits.items():
        if name == "train" and "train" in recorded:
            _check_unchanged(recorded["train"], run)
            record["train"] = recorded["train"]
            continue
        try:
            summaries = corpus(recipe, split).scan()
        except (OSError, ValueError) as error:
            raise UserError(str(error)) from None
        record[name] = [[summary.to_dict() for summary in part] for part in summaries]
    if record != recorded:
        os.makedirs(os.path.dirname(run.sources_path), exist_ok=True)
        atomic_write_json(record, run.sources_path)
    return record


def training_pairs_count(record):
    """Lines of the training corpus (pairs, bad ones included), or `None`
    without a record: the progress total of `prepare`."""
    if not record:
        return None
    return sum(part[0]["lines"] for part in record["train"])


def _check_unchanged(parts, run):
    import pipelines

    for summary in (summary for part in parts for summary in part):
        if not pipelines.file_unchanged(summary):
            raise UserError(
                f"{summary['path']} changed since {run.path} was prepared (recorded "
                f"{summary['bytes']} bytes, SHA-256 {summary['sha256'][:12]}...); "
                "its tokenizer and cache were made from the old content: use a new "
                "run directory."
            )
