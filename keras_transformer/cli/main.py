"""Argument parsing for `keras-transformer`; each subcommand calls one function."""

import json
import os
import sys

from keras_transformer.cli.argument_parser import ArgumentParser
from keras_transformer.cli.compute_dtypes import COMPUTE_DTYPE_POLICIES
from keras_transformer.cli.option_types import (
    NON_NEGATIVE_FLOAT,
    NON_NEGATIVE_INT,
    POSITIVE_FLOAT,
    POSITIVE_INT,
    export_directory,
    input_file,
    output_file,
    run_directory,
    tf_text_version,
    weights_file,
)
from keras_transformer.cli.user_error import UserError, report_error
from keras_transformer.precisions import PRECISIONS

# The commands that train, where a fixed mmap threshold returns XLA's freed
# compile buffers (BUILD_NOTES.md, "Training"). Not the decoding commands:
# with it, every allocation over 128 KiB is a fresh mmap, and the parsing
# search ran 1.75x slower (BUILD_NOTES.md, "Parsing speed").
MEMORY_TUNED_COMMANDS = ("train", "demo")


def _overrides(pairs):
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


def _recipe(args):
    from keras_transformer.recipes import get_recipe

    overrides = _overrides(args.set)
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
    return get_recipe(args.recipe, **overrides)


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
    for option in ("train", "dev", "test"):
        parts = getattr(args, option, None) or []
        for part in parts:
            if len(part) not in (1, 2):
                raise UserError(
                    f"--{option} takes a TSV file or two line-aligned files "
                    f"(source, target). Received: --{option} {' '.join(part)}"
                )
        overrides[f"{option}_files"] = [
            [os.path.abspath(path) for path in part] for part in parts
        ]
    return overrides


def _prepare(args):
    from keras_transformer.cli.prepare import prepare

    prepare(_recipe(args), args.run_dir)


def _train(args):
    from keras_transformer.cli.train import train

    jit = {"auto": "auto", "on": True, "off": False}[args.xla]
    train(_recipe(args), args.run_dir, strategy=args.strategy, jit_compile=jit)


def _average(args):
    from keras_transformer.cli.average import average

    average(args.run_dir, last=args.last)


def _evaluate(args):
    from keras_transformer.cli.evaluate import evaluate

    evaluate(
        args.run_dir,
        split=args.split,
        weights=args.weights,
        limit=args.limit,
        decoding=_decoding_overrides(args),
        paper_style=args.paper_style,
        compute_dtype=args.compute_dtype,
    )


def _translate(args):
    from keras_transformer.cli.translate import (
        check_output_path,
        count_lines,
        load_translator,
        translate_file,
    )

    # A bad input or output is refused before the model loads.
    total = count_lines(args.input)
    check_output_path(args.output, args.input)
    translator, decoding = load_translator(
        args.run_dir,
        args.export,
        args.weights,
        _decoding_overrides(args),
        compute_dtype=args.compute_dtype,
    )
    # Progress on stderr, unless it would be drawn among the translations.
    shown = args.output != "-" or (sys.stderr.isatty() and not sys.stdout.isatty())
    translate_file(
        translator,
        args.input,
        args.output,
        decoding=decoding,
        total=total,
        progress=sys.stderr if shown else None,
        batch_tokens=args.batch_tokens,
        batch_size=args.batch_size,
    )


def _decoding_overrides(args):
    """The decoding options given on the command line, `{field: value}`; an
    option left out is absent, so the run's (or the paper's) value holds."""
    names = ("method", "beam_size", "alpha", "max_extra_length", "n_best")
    values = {name: getattr(args, name, None) for name in names}
    return {name: value for name, value in values.items() if value is not None}


def _parse(args):
    from keras_transformer.cli.parse import parse, parse_with_export

    if (args.run_dir is None) == (args.export is None):
        raise UserError("Give exactly one of --run-dir and --export.")
    if args.input == "-":
        lines = list(sys.stdin)
    elif not os.path.exists(args.input):
        raise UserError(f"No such input file: {args.input}")
    else:
        with open(args.input, encoding="utf-8", errors="replace") as f:
            lines = list(f)
    decoding = _decoding_overrides(args)

    def run(output):
        if args.export is not None:
            return parse_with_export(args.export, lines, output, decoding)
        return parse(args.run_dir, lines, output, args.weights, decoding)

    if args.output == "-":
        run(None)
        return
    with open(args.output, "w", encoding="utf-8") as output:
        run(output)


def _export(args):
    from keras_transformer.cli.export import export

    export(
        args.run_dir,
        weights=args.weights,
        version=args.version,
        overwrite=args.overwrite,
        tf_text_version=args.tf_text_version,
        compute_dtype=args.compute_dtype,
    )


def _attention(args):
    from keras_transformer.cli.attention import attention

    attention(
        args.run_dir,
        args.sentence,
        args.png,
        target=args.target,
        kind=args.kind,
        layer=args.layer,
        heads=args.heads,
        weights=args.weights,
    )


def _evalb(args):
    from keras_transformer.cli.evalb import evalb_files

    evalb_files(
        args.gold_file,
        args.test_file,
        prm=args.prm,
        evalb_compatible=args.evalb_compatible,
        placeholder_tag=args.placeholder_tag,
    )


def _demo(args):
    from keras_transformer.cli.demo import DEMO_RECIPES, run_demo
    from keras_transformer.recipes import get_recipe

    overrides = _overrides(args.set)
    if args.updates is not None:
        overrides["train_steps"] = args.updates
    if args.precision is not None:
        overrides["precision"] = args.precision
    if args.minutes is not None:
        overrides["train_minutes"] = args.minutes
        # A time budget alone: the clock decides within the preset's step
        # budget (`train_steps=None`: 100K for base, §5.2), not the
        # recipe's small one.
        overrides.setdefault("train_steps", None)
    run_demo(
        get_recipe(DEMO_RECIPES[args.task], **overrides),
        args.output,
        test_sentences=args.test_sentences,
        examples=args.examples,
        verbose=2 if args.quiet else 1,
        dev_sentences=args.dev_sentences,
    )


def _recipes(args):
    from keras_transformer.recipes import RECIPES

    if args.name is not None and args.name not in RECIPES:
        raise UserError(
            f"Unknown recipe; the recipes are {', '.join(RECIPES)}. "
            f"Received: name={args.name!r}"
        )
    for name, recipe in RECIPES.items():
        if args.name in (None, name):
            print(f"{name}: {recipe.description}")
            if args.name:
                model = recipe.model_config(recipe.vocab_size).to_dict()
                training = {
                    "train_steps": recipe.total_train_steps,
                    "label_smoothing": recipe.effective_label_smoothing,
                }
                settings = {**recipe.to_dict(), "model": model, "training": training}
                print(json.dumps(settings, indent=2))


def _add_recipe_arguments(parser, steps=False):
    parser.add_argument("--recipe", required=True, help="Recipe name (see `recipes`).")
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
    for option, what in (
        ("train", "Training data"),
        ("dev", "Development data (evaluate --split dev)"),
        ("test", "Test data (evaluate's default split)"),
    ):
        data.add_argument(
            f"--{option}",
            nargs="+",
            action="append",
            metavar="FILE",
            help=f"{what}: SOURCE TARGET, or FILE.tsv.",
        )
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
        _add_precision_argument(parser)


def _add_precision_argument(parser):
    parser.add_argument(
        "--precision",
        choices=PRECISIONS,
        help="Training precision (a Keras dtype policy; variables and "
        "checkpoints stay float32): mixed_float16 for GPUs (with loss "
        "scaling), mixed_bfloat16 for TPUs and CPUs with AVX-512 BF16 or "
        "AMX. A run may "
        "resume in another precision. Default: the recipe's (float32).",
    )


def _add_decoding_arguments(parser, where):
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


def _add_compute_dtype_argument(parser, default="float32", where="float32"):
    parser.add_argument(
        "--compute-dtype",
        choices=sorted(COMPUTE_DTYPE_POLICIES),
        default=default,
        help="Decode in bfloat16 instead of float32 (the float32 weights are "
        "rounded to bfloat16 on loading): faster on CPUs with AMX, BLEU within "
        f"a few tenths (BUILD_NOTES.md). Default: {where}.",
    )


def build_parser():
    parser = ArgumentParser(
        prog="keras-transformer",
        description="The Transformer of 'Attention Is All You Need' for Keras 3: "
        "prepare -> train -> average -> evaluate -> export -> translate.",
    )
    parser.add_argument(
        "--debug", action="store_true", help="Show the traceback of an error."
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="Keep TensorFlow's start-up and log lines and library warnings "
        "(hidden by default).",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser(
        "demo",
        help="Train, average, evaluate, export and reload a small English-German "
        "model on the bundled corpus (a fixed number of updates, about 12 minutes "
        "in all on 2 CPU cores).",
    )
    demo.add_argument(
        "--task",
        choices=("translation", "parsing"),
        default="translation",
        help="translation: the 'demo' recipe (LibreOffice help, En-De); parsing: "
        "the 'gum_parsing' recipe (bundled GUM trees, §6.3).",
    )
    demo.add_argument(
        "--updates",
        type=POSITIVE_INT,
        help="Training updates (default: the recipe's train_steps, see "
        "`keras-transformer recipes demo`; the same model on every machine).",
    )
    demo.add_argument(
        "--minutes",
        type=POSITIVE_FLOAT,
        help="Train for this many minutes instead (with --updates: whichever "
        "comes first); the result then depends on the machine's speed.",
    )
    demo.add_argument(
        "--output", default="keras-transformer-demo", help="The run directory."
    )
    demo.add_argument(
        "--test-sentences",
        type=POSITIVE_INT,
        help="Score only the first N test sentences.",
    )
    demo.add_argument(
        "--examples",
        type=NON_NEGATIVE_INT,
        default=5,
        help="Test sentences shown at the end.",
    )
    demo.add_argument(
        "--dev-sentences",
        type=NON_NEGATIVE_INT,
        default=200,
        help="Dev sentences scored (greedy BLEU; parsing: greedy F1 on a "
        "fifth as many trees) at each checkpoint for learning_curve.png; 0 "
        "for none.",
    )
    _add_precision_argument(demo)
    demo.add_argument("--set", action="append", metavar="KEY=VALUE", help="As train.")
    demo.add_argument("--quiet", action="store_true", help="One line per epoch.")
    demo.set_defaults(handler=_demo)

    recipes = commands.add_parser("recipes", help="List the recipes, or show one.")
    recipes.add_argument("name", nargs="?", help="Show this recipe's settings.")
    recipes.set_defaults(handler=_recipes)

    prepare = commands.add_parser(
        "prepare", help="Train or load the tokenizer; tokenize and cache the data."
    )
    _add_recipe_arguments(prepare)
    prepare.set_defaults(handler=_prepare)

    train = commands.add_parser(
        "train", help="Train a recipe (resumes when run again in the same directory)."
    )
    _add_recipe_arguments(train, steps=True)
    train.add_argument(
        "--strategy",
        default="default",
        choices=["default", "mirrored", "multi_worker", "tpu"],
        help="tf.distribute strategy: one device, all local GPUs, several machines "
        "(TF_CONFIG), or a TPU.",
    )
    train.add_argument(
        "--xla",
        default="auto",
        choices=["auto", "on", "off"],
        help="XLA for the train step. on: batches padded to their bucket "
        "lengths (one shape per bucket pair, counted first), each shape "
        "compiled once and kept in RUN_DIR/xla_cache for resumed runs. "
        "auto (default): on with a GPU or TPU, off on CPUs, where it measured "
        "no faster (BUILD_NOTES.md, Speed).",
    )
    train.set_defaults(handler=_train)

    average = commands.add_parser(
        "average", help="Average the last checkpoints of a run (§6.1)."
    )
    average.add_argument("--run-dir", required=True, type=run_directory)
    average.add_argument(
        "--last", type=POSITIVE_INT, help="How many (default: the recipe's)."
    )
    average.set_defaults(handler=_average)

    evaluate = commands.add_parser(
        "evaluate", help="Translate a held-out split and score it with sacreBLEU."
    )
    evaluate.add_argument("--run-dir", required=True, type=run_directory)
    evaluate.add_argument("--split", help="Default: the recipe's test split.")
    evaluate.add_argument(
        "--weights", type=weights_file, help="Default: newest averaged, else newest."
    )
    evaluate.add_argument(
        "--limit", type=POSITIVE_INT, help="Only the first N sentences."
    )
    evaluate.add_argument(
        "--method", choices=["beam", "greedy"], help="Default: the recipe's."
    )
    _add_decoding_arguments(evaluate, "the recipe's")
    evaluate.add_argument(
        "--paper-style",
        action="store_true",
        help="Also the paper's tokenized, compound-split BLEU (Table 2 only).",
    )
    _add_compute_dtype_argument(evaluate)
    evaluate.set_defaults(handler=_evaluate)

    translate = commands.add_parser(
        "translate",
        help="Translate the lines of a file or stdin to a file or stdout, streaming.",
        description="Reads the input in chunks of a few thousand lines, sorts each "
        "chunk by length into batches (--batch-tokens, --batch-size) and writes the "
        "translations in input order as they are done, so a stopped run leaves the "
        "first lines translated. Empty lines give empty lines. Progress, with "
        "sentences/s, goes to stderr when --output is a file, or when stderr is a "
        "terminal and stdout is not.",
    )
    translate.add_argument(
        "--run-dir", type=run_directory, help="Translate with a run's weights."
    )
    translate.add_argument(
        "--export",
        type=export_directory,
        help="Or with an exported SavedModel version.",
    )
    translate.add_argument(
        "--weights", type=weights_file, help="With --run-dir: a weights file."
    )
    translate.add_argument(
        "--input",
        default="-",
        type=input_file,
        help="Input file, UTF-8 (a .gz file is decompressed); - for stdin. Default: -.",
    )
    translate.add_argument(
        "--output",
        default="-",
        type=output_file,
        help="Output file, written as FILE.partial and renamed when complete; - "
        "for stdout. Default: -.",
    )
    _add_decoding_arguments(translate, "the run's recipe, or the export's")
    translate.add_argument(
        "--n-best",
        type=POSITIVE_INT,
        help="Hypotheses per line, in the Moses format 'index ||| text ||| score' "
        "(index from 0). Default: the run's recipe, or the export's (1).",
    )
    translate.add_argument(
        "--batch-tokens",
        type=POSITIVE_INT,
        default=4096,
        help="Size of one batch, in estimated source tokens (UTF-8 bytes / 4, a "
        "stand-in for subword tokens), padding included: lines x the longest "
        "line's estimate. A longer line is translated alone. Default: %(default)s.",
    )
    translate.add_argument(
        "--batch-size",
        type=POSITIVE_INT,
        default=256,
        help="The most lines in one batch. Default: %(default)s.",
    )
    # No default: an export computes in the dtype it was exported with.
    _add_compute_dtype_argument(
        translate, default=None, where="float32 with --run-dir; an export's own"
    )
    translate.set_defaults(handler=_translate)

    parse = commands.add_parser(
        "parse",
        help="Parse English sentences (words separated by spaces, one a line) "
        "into bracketed trees with a parsing run (§6.3).",
    )
    parse.add_argument("--run-dir", type=run_directory, help="A parsing run.")
    parse.add_argument(
        "--export", type=export_directory, help="Or a parsing run's SavedModel."
    )
    parse.add_argument(
        "--weights", type=weights_file, help="Default: newest averaged, else newest."
    )
    parse.add_argument(
        "--input", default="-", type=input_file, help="Input file; - for stdin."
    )
    parse.add_argument("--output", default="-", help="Output file; - for stdout.")
    _add_decoding_arguments(parse, "the run's recipe, or the export's")
    parse.set_defaults(handler=_parse)

    export = commands.add_parser(
        "export", help="Export a SavedModel (raw text in, translations out)."
    )
    export.add_argument("--run-dir", required=True, type=run_directory)
    export.add_argument(
        "--weights", type=weights_file, help="Default: newest averaged, else newest."
    )
    export.add_argument(
        "--version", type=POSITIVE_INT, help="Default: the next free number."
    )
    export.add_argument("--overwrite", action="store_true")
    export.add_argument(
        "--tf-text-version",
        type=tf_text_version,
        help="tensorflow-text release of the target TF Serving, for the op check "
        "('none' skips it). Default: the release stock TF Serving links.",
    )
    _add_compute_dtype_argument(export)
    export.set_defaults(handler=_export)

    attention = commands.add_parser(
        "attention", help="Draw one sentence's attention weights as a PNG heatmap."
    )
    attention.add_argument("--run-dir", required=True, type=run_directory)
    attention.add_argument(
        "--weights", type=weights_file, help="Default: newest averaged, else newest."
    )
    attention.add_argument("--sentence", required=True, help="The source sentence.")
    attention.add_argument(
        "--target", help="Target sentence; default: the model's greedy translation."
    )
    attention.add_argument(
        "--kind", default="cross", choices=["encoder", "decoder", "cross"]
    )
    attention.add_argument("--layer", type=int, default=-1, help="Layer index.")
    attention.add_argument(
        "--heads", type=int, nargs="+", help="Head indices (default: all)."
    )
    attention.add_argument(
        "--png", required=True, type=output_file, help="Output image path."
    )
    attention.set_defaults(handler=_attention)

    evalb = commands.add_parser(
        "evalb",
        help="Labelled bracket F1 of parsed trees, as EVALB with COLLINS.prm (§6.3).",
    )
    evalb.add_argument("gold_file", help="Gold trees, one per line.")
    evalb.add_argument("test_file", help="Parsed trees, line by line with the gold.")
    evalb.add_argument(
        "--prm", help="An EVALB parameter file. Default: the bundled COLLINS.prm."
    )
    evalb.add_argument(
        "--evalb-compatible",
        action="store_true",
        help="Leave out sentences whose words differ from the gold, as EVALB does "
        "(default: score them as zero matched brackets).",
    )
    evalb.add_argument(
        "--placeholder-tag",
        default="XX",
        help="Test tag that takes the gold tag before scoring ('' for none). "
        "Default: XX.",
    )
    evalb.set_defaults(handler=_evalb)
    return parser


def main(argv=None):
    from keras_transformer.cli.startup import (
        import_tensorflow_quietly,
        native_log_filter,
        quiet_logs,
    )
    from keras_transformer.process_defaults import tune_memory

    parser = build_parser()
    args = parser.parse_args(argv)
    import_tensorflow_quietly(args.verbose)  # before anything imports it
    from keras_transformer.cli.option_checks import check_options

    if args.command in MEMORY_TUNED_COMMANDS:
        tune_memory()  # a program's choice, made here (process_defaults)
    try:
        with native_log_filter(args.verbose), quiet_logs(args.verbose):
            check_options(args, _decoding_overrides(args))
            args.handler(args)
    except (Exception, KeyboardInterrupt) as error:  # the one error path
        return report_error(
            error, args.command, getattr(args, "run_dir", None), args.debug
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
