"""Checks of options against each other and against what they name, made
right after parsing and before anything loads: decoding options against the
export's limits (its record) or the run's recipe."""

import os

from keras_transformer.decoding.decoding_config import DecodingConfig
from keras_transformer.runs.user_error import UserError
from savedmodels.export_record import (
    check_export_limits,
    export_decoding,
    export_record,
)

# Per-option names of the command line, for the messages.
_OPTIONS = {
    "beam_size": "--beam-size",
    "max_extra_length": "--max-extra-length",
    "n_best": "--n-best",
}


def check_decoding_options(overrides, export_dir=None, run_dir=None):
    """Refuses decoding options that the export or the run cannot take.

    With `export_dir`: the beam size and extra length must be within the
    export's `max_beam_size` and `max_extra_length_limit` (its record; the
    signature would refuse them with a TensorFlow error). Either way the
    number of hypotheses must be within the beam size, the given one or the
    export's (or recipe's).

    Args:
        overrides: dict. The decoding options given (`{"beam_size": 4}`).
        export_dir: str or `None`. An exported SavedModel version.
        run_dir: str or `None`. A run directory (used when it holds a run).

    Raises:
        ValueError (`UserError`, or `check_export_limits`'s): naming the
            option, the value and the limit.
    """
    if export_dir is not None:
        base = export_decoding(export_dir, required=False)
        record, path = export_record(export_dir)
        limits = record.get("decoding") or {}
        check_export_limits(overrides, limits, f"its record, {path}", _OPTIONS)
    elif run_dir is not None and os.path.isfile(os.path.join(run_dir, "recipe.json")):
        from keras_transformer.runs.run_directory import RunDirectory

        base = RunDirectory(run_dir).read_recipe().decoding
    else:
        base = DecodingConfig()
    beam_size = overrides.get("beam_size") or base.beam_size
    n_best = overrides.get("n_best") or base.n_best
    method = overrides.get("method") or base.method
    if method == "beam" and n_best > beam_size:
        given = "--beam-size" if "beam_size" in overrides else "the run's or export's"
        raise UserError(
            f"--n-best cannot exceed the beam size {beam_size} ({given}). "
            f"Received: n_best={n_best}, beam_size={beam_size}"
        )


def check_options(args, decoding_overrides):
    """The checks of parsed options that read what they name (`main` calls
    it before the subcommand): decoding options of `translate`, `parse` and
    `evaluate` against the export or the run."""
    if args.command not in ("translate", "parse", "evaluate"):
        return
    check_decoding_options(
        decoding_overrides,
        export_dir=getattr(args, "export", None),
        run_dir=getattr(args, "run_dir", None),
    )
