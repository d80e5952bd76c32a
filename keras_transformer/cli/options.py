"""The options several subcommands share, each written once: the recipe and
data options of `prepare` and `train` (and how they make the run's recipe),
the decoding options, `--precision` and `--compute-dtype`."""

import json
import os

from keras_transformer.cli.option_types import (
    NON_NEGATIVE_FLOAT,
    NON_NEGATIVE_INT,
    POSITIVE_FLOAT,
    POSITIVE_INT,
    run_directory,
)
from keras_transformer.precisions import PRECISION_CHOICES
from keras_transformer.runs.compute_dtypes import (
    COMPUTE_DTYPE_CHOICES,
    COMPUTE_DTYPE_POLICIES,
)
from keras_transformer.runs.user_error import UserError


def set_overrides(pairs):
    """`["key=value", ...]` -> dict; values are JSON when they parse as JSON."""
    result = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserError(f"--set expects KEY=VALUE. Received: {pair!r}")
        try:
            result[key] = json.loads(value)
        except json.JSONDecodeError:
            result[key] = value
    return result


def recipe_from_arguments(args):
    """The recipe `prepare` and `train` run: the named recipe with the options
    given, for a new run directory; the run's own recipe (`recipe.json`) with
    the options given, for an existing one, where `--recipe` and the data
    options may be left out (`RunDirectory.write_recipe` then refuses a
    change of a field a run may not change, naming each)."""
    from keras_transformer.recipes import get_recipe
    from keras_transformer.runs.run_directory import RunDirectory

    overrides = set_overrides(args.set)
    for field in (
        "train_steps",
        "train_minutes",
        "source_language",
        "target_language",
        "on_bad_line",
        "max_length_ratio",
        "precision",
    ):
        value = getattr(args, field, None)
        if value is not None:
            overrides[field] = value
    overrides.update(_data_files(args))
    if getattr(args, "treebank_dir", None):
        overrides["treebank_dir"] = os.path.abspath(args.treebank_dir)
    if getattr(args, "extra_trees", None):
        overrides["train_files"] = [[os.path.abspath(p)] for p in args.extra_trees]
    run = RunDirectory(args.run_dir)
    if not os.path.exists(run.recipe_path):
        if args.recipe is None:
            raise UserError(
                f"{args.run_dir} is a new run directory (no recipe.json): give "
                "--recipe (see `keras-transformer recipes`)."
            )
        return get_recipe(args.recipe, **overrides)
    stored = run.read_recipe()
    if args.recipe is not None and args.recipe != stored.name:
        raise UserError(
            f"{args.run_dir} holds a run of recipe {stored.name!r}, not "
            f"{args.recipe!r}: leave --recipe out to continue it, or give a new "
            "--run-dir to start a new run."
        )
    recipe = stored.with_overrides(overrides)
    changed = run.changed_fields(recipe)
    if changed:
        print(f"{args.run_dir}: {changed} (recorded in recipe.json)")
    return recipe


def _data_files(args):
    """`--train/--dev/--test` as recipe overrides: the "files" data source,
    absolute paths, and the languages given (else language-neutral `None`)."""
    if not getattr(args, "train", None):
        for option in ("dev", "test"):
            if getattr(args, option, None):
                raise UserError(f"--{option} needs --train (the user's own corpus).")
        return {}
    overrides = {
        "data_source": "files",
        "dataset": None,
        "train_split": "train",
        "dev_split": "dev",
        "test_split": "test",
        "source_language": args.source_language,
        "target_language": args.target_language,
    }
    overrides.update(corpus_parts(args, ("train", "dev", "test")))
    return overrides


# What each corpus option holds, for its help.
CORPUS_OPTIONS = {
    "train": "Training data",
    "dev": "Development data (evaluate --split dev)",
    "test": "Test data (evaluate's default split)",
}


def add_corpus_arguments(parser, options):
    """`--train`, `--dev`, `--test` (those of `options`): each SOURCE TARGET
    or FILE.tsv, repeatable."""
    for option in options:
        parser.add_argument(
            f"--{option}",
            nargs="+",
            action="append",
            metavar="FILE",
            help=f"{CORPUS_OPTIONS[option]}: SOURCE TARGET, or FILE.tsv.",
        )


def corpus_parts(args, options):
    """`{"<option>_files": [[absolute paths], ...]}` of the corpus options
    given; a part of other than one or two files is a `UserError`."""
    parts_of = {}
    for option in options:
        parts = getattr(args, option, None)
        if not parts:  # left out: an existing run keeps its files
            continue
        for part in parts:
            if len(part) not in (1, 2):
                raise UserError(
                    f"--{option} takes a TSV file or two line-aligned files "
                    f"(source, target). Received: --{option} {' '.join(part)}"
                )
        parts_of[f"{option}_files"] = [
            [os.path.abspath(path) for path in part] for part in parts
        ]
    return parts_of


def decoding_overrides(args):
    """The decoding options given on the command line, `{field: value}`; an
    option left out is absent, so the run's (or the paper's) value holds."""
    names = ("method", "beam_size", "alpha", "max_extra_length", "n_best")
    values = {name: getattr(args, name, None) for name in names}
    return {name: value for name, value in values.items() if value is not None}


def add_recipe_arguments(parser, steps=False):
    parser.add_argument(
        "--recipe",
        help="Recipe name (see `recipes`); needed for a new run directory. An "
        "existing run continues with its own recipe (recipe.json).",
    )
    parser.add_argument(
        "--run-dir", required=True, type=run_directory, help="The run directory."
    )
    parser.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="Override a recipe field (repeatable), e.g. --set warmup_steps=8000, "
        "--set model.dropout=0.2 or --set decoding.beam_size=8.",
    )
    data = parser.add_argument_group(
        "your own data",
        "Parallel text in files, instead of the recipe's data: two line-aligned "
        "files (SOURCE TARGET) or one TSV file (SOURCE<TAB>TARGET), plain, .gz or "
        ".xz. Repeat an option to concatenate files.",
    )
    add_corpus_arguments(data, ("train", "dev", "test"))
    data.add_argument(
        "--treebank-dir",
        metavar="DIR",
        help="Parsing recipes (wsj_parsing): a Penn Treebank (LDC99T42, or any "
        "folder of wsj_SSNN.mrg files); the WSJ sections of each split are the "
        "recipe's (02-21, 22, 23). For parsing, --train/--dev/--test take tree "
        "files instead.",
    )
    data.add_argument(
        "--extra-trees",
        action="append",
        metavar="FILE",
        help="With --treebank-dir: more training trees (bracket files), read "
        "with the WSJ training sections (wsj_parsing_semi_supervised).",
    )
    data.add_argument(
        "--source-language",
        help="Source language code (e.g. en, ar). Default with --train: none "
        "(language-neutral); else the recipe's.",
    )
    data.add_argument(
        "--target-language",
        help="Target language code; BLEU's tokenizer follows it (zh, ja, ko, else "
        "13a). Default as --source-language.",
    )
    data.add_argument(
        "--on-bad-line",
        choices=["skip", "fail"],
        help="Invalid UTF-8, malformed TSV lines, empty sides, too long pairs and "
        "length ratios over the limit: skip and count them, or stop at the first, "
        "naming file and line. Default: the recipe's (skip).",
    )
    data.add_argument(
        "--max-length-ratio",
        type=POSITIVE_FLOAT,
        help="Skip pairs whose subword counts differ by more than this ratio "
        "(Moses uses 9). Default: the recipe's (none).",
    )
    if steps:
        parser.add_argument(
            "--train-steps", type=POSITIVE_INT, help="Updates to train for."
        )
        parser.add_argument(
            "--train-minutes", type=POSITIVE_FLOAT, help="Wall-clock budget in minutes."
        )
        add_precision_argument(parser)


def add_precision_argument(parser):
    parser.add_argument(
        "--precision",
        choices=PRECISION_CHOICES,
        help="Training precision (a Keras dtype policy; variables and "
        "checkpoints stay float32): mixed_float16 for GPUs (with loss "
        "scaling), mixed_bfloat16 for TPUs and CPUs with AVX-512 BF16 or "
        "AMX; auto is mixed_bfloat16 on such a CPU without a GPU or TPU, "
        "float32 elsewhere. A run may resume in another precision. Default: "
        "the recipe's (float32; auto for demo and gum_parsing).",
    )


def add_decoding_arguments(parser, where):
    """Decoding options; each defaults to `where`'s value (the run's recipe,
    whose own default is the paper's `DecodingConfig`, §6.1)."""
    parser.add_argument(
        "--beam-size", type=POSITIVE_INT, help=f"Beam size K. Default: {where}."
    )
    parser.add_argument(
        "--alpha",
        type=NON_NEGATIVE_FLOAT,
        help=f"Length penalty exponent. Default: {where}.",
    )
    parser.add_argument(
        "--max-extra-length",
        type=NON_NEGATIVE_INT,
        help=f"Output length = input length + N. Default: {where}.",
    )


def add_compute_dtype_argument(parser, default="float32", where="float32", auto=True):
    """`--compute-dtype`; `auto` (`resolve_compute_dtype`) among its choices
    unless `auto` is false (an export is read on another machine)."""
    parser.add_argument(
        "--compute-dtype",
        choices=sorted(COMPUTE_DTYPE_CHOICES if auto else COMPUTE_DTYPE_POLICIES),
        default=default,
        help="Decode in bfloat16 instead of float32 (the float32 weights are "
        "rounded to bfloat16 on loading): faster on CPUs with bfloat16 matmuls "
        "(AVX-512 BF16, AMX), BLEU and F1 within a few tenths (docs/results.md)"
        + (
            "; auto: bfloat16 on such a CPU without a GPU or TPU, as training's "
            "--precision auto, else float32"
            if auto
            else ""
        )
        + f". Default: {where}.",
    )
