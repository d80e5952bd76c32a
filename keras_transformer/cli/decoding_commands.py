"""The subcommands that use a trained run: `evaluate`, `translate`, `parse`,
`export`, `attention`, `evalb`; each one's options next to its handler."""

import sys

from keras_transformer.cli.option_types import (
    POSITIVE_INT,
    export_directory,
    input_file,
    output_file,
    run_directory,
    tf_text_version,
    weights_file,
)
from keras_transformer.cli.options import (
    add_compute_dtype_argument,
    add_decoding_arguments,
    decoding_overrides,
)
from keras_transformer.runs.user_error import UserError
from keras_transformer.translation.batch_defaults import (
    BATCH_SIZE,
    BATCH_TOKENS,
    PARSE_BATCH_SIZE,
    PARSE_BATCH_SYMBOLS,
)


def _evaluate(args):
    from keras_transformer.workflows.evaluate_run import evaluate

    evaluate(
        args.run_dir,
        split=args.split,
        weights=args.weights,
        limit=args.limit,
        decoding=decoding_overrides(args),
        paper_style=args.paper_style,
        compute_dtype=args.compute_dtype,
        verbose=1,
    )


def _load(kind, args, **run_options):
    """A `Translator` or `Parser` (`kind`) of `--run-dir` or `--export`."""
    if (args.run_dir is None) == (args.export is None):
        raise UserError("Give exactly one of --run-dir and --export.")
    if args.export is not None:
        if args.compute_dtype is not None:
            raise UserError(
                "--compute-dtype is for --run-dir: an export computes in the "
                "dtype it was exported with (`export --compute-dtype`). "
                f"Received: --compute-dtype {args.compute_dtype}"
            )
        return kind.from_export(args.export)
    return kind.from_run(
        args.run_dir,
        weights=args.weights,
        compute_dtype=args.compute_dtype or "auto",
        **run_options,
    )


def _progress_stream(args):
    """stderr for the progress line, unless it would be drawn among the
    outputs (stdout on the same terminal)."""
    shown = args.output != "-" or (sys.stderr.isatty() and not sys.stdout.isatty())
    return sys.stderr if shown else None


def _translate(args):
    from keras_transformer.translation.line_files import (
        check_output_path,
        count_lines,
    )
    from keras_transformer.translation.translator import Translator

    # A bad input or output is refused before the model loads.
    total = count_lines(args.input)
    check_output_path(args.output, args.input)
    _load(Translator, args).translate_file(
        args.input,
        args.output,
        progress=_progress_stream(args),
        batch_tokens=args.batch_tokens,
        batch_size=args.batch_size,
        total=total,
        **decoding_overrides(args),
    )


def _parse(args):
    from keras_transformer.parsing.parser import Parser
    from keras_transformer.translation.line_files import (
        check_output_path,
        count_lines,
    )

    # A bad input or output is refused before the model loads.
    total = count_lines(args.input, errors="replace")
    check_output_path(args.output, args.input)
    parser = _load(Parser, args, lines=total, notices=sys.stderr)
    progress = _progress_stream(args)
    count = parser.parse_file(
        args.input,
        args.output,
        progress=progress,
        batch_size=args.batch_size,
        batch_tokens=args.batch_tokens,
        total=total,
        **decoding_overrides(args),
    )
    if progress is not None:
        print(
            f"parse: {count} lines, {parser.repairs} repairs of the model's output"
            + ("" if parser.cut is None else f", {parser.cut} lines cut"),
            file=sys.stderr,
        )


def _export(args):
    from keras_transformer.workflows.export_run import export

    export(
        args.run_dir,
        weights=args.weights,
        version=args.version,
        overwrite=args.overwrite,
        tf_text_version=args.tf_text_version,
        compute_dtype=args.compute_dtype,
        verbose=1,
    )


def _attention(args):
    from keras_transformer.translation.attention_plot import attention

    attention(
        args.run_dir,
        args.sentence,
        args.png,
        target=args.target,
        kind=args.kind,
        layer=args.layer,
        heads=args.heads,
        weights=args.weights,
        verbose=1,
    )


def _evalb(args):
    from keras_transformer.parsing.file_scoring import evalb_files

    evalb_files(
        args.gold_file,
        args.test_file,
        prm=args.prm,
        evalb_compatible=args.evalb_compatible,
        placeholder_tag=args.placeholder_tag,
    )


def _add_weights_argument(parser):
    """`--weights`: a weights file of the run (the default is
    `RunDirectory.latest_weights`)."""
    parser.add_argument(
        "--weights", type=weights_file, help="Default: newest averaged, else newest."
    )


def add_commands(commands):
    """Adds these subcommands, each with its options and handler, to
    `commands` (the `add_subparsers` of `build_parser`)."""
    evaluate = commands.add_parser(
        "evaluate", help="Translate a held-out split and score it with sacreBLEU."
    )
    evaluate.add_argument("--run-dir", required=True, type=run_directory)
    evaluate.add_argument("--split", help="Default: the recipe's test split.")
    _add_weights_argument(evaluate)
    evaluate.add_argument(
        "--limit", type=POSITIVE_INT, help="Only the first N sentences."
    )
    evaluate.add_argument(
        "--method", choices=["beam", "greedy"], help="Default: the recipe's."
    )
    add_decoding_arguments(evaluate, "the recipe's")
    evaluate.add_argument(
        "--paper-style",
        action="store_true",
        help="Also the paper's tokenized, compound-split BLEU (Table 2 only).",
    )
    add_compute_dtype_argument(evaluate)
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
    add_decoding_arguments(translate, "the run's recipe, or the export's")
    translate.add_argument(
        "--n-best",
        type=POSITIVE_INT,
        help="Hypotheses per line, in the Moses format 'index ||| text ||| score' "
        "(index from 0). Default: the run's recipe, or the export's (1).",
    )
    translate.add_argument(
        "--batch-tokens",
        type=POSITIVE_INT,
        default=BATCH_TOKENS,
        help="Size of one batch, in estimated source tokens (UTF-8 bytes / 4, a "
        "stand-in for subword tokens), padding included: lines x the longest "
        "line's estimate. A longer line is translated alone. Default: %(default)s.",
    )
    translate.add_argument(
        "--batch-size",
        type=POSITIVE_INT,
        default=BATCH_SIZE,
        help="The most lines in one batch. Default: %(default)s.",
    )
    # No default: an export computes in the dtype it was exported with.
    add_compute_dtype_argument(
        translate, default=None, where="auto with --run-dir; an export's own"
    )
    translate.set_defaults(handler=_translate)

    parse = commands.add_parser(
        "parse",
        help="Parse English sentences (words separated by spaces, one a line) "
        "into bracketed trees with a parsing run (§6.3), streaming.",
        description="Reads the input in chunks of a few thousand lines, sorts each "
        "chunk by length into batches (--batch-tokens, --batch-size) and writes the "
        "trees in input order as they are done, so a stopped run leaves the first "
        "lines parsed. An empty line gives (TOP ); invalid UTF-8 is read as U+FFFD. "
        "Progress, with sentences/s, goes to stderr when --output is a file, or "
        "when stderr is a terminal and stdout is not.",
    )
    parse.add_argument("--run-dir", type=run_directory, help="A parsing run.")
    parse.add_argument(
        "--export", type=export_directory, help="Or a parsing run's SavedModel."
    )
    _add_weights_argument(parse)
    parse.add_argument(
        "--input",
        default="-",
        type=input_file,
        help="Input file (a .gz file is decompressed); - for stdin. Default: -.",
    )
    parse.add_argument(
        "--output",
        default="-",
        type=output_file,
        help="Output file, written as FILE.partial and renamed when complete; - "
        "for stdout. Default: -.",
    )
    add_decoding_arguments(parse, "the run's recipe, or the export's")
    parse.add_argument(
        "--batch-tokens",
        type=POSITIVE_INT,
        help="Size of one batch in tree symbols, padding included: lines x the "
        "longest line's bound (3 x words + 21). A longer line is parsed alone. "
        f"Default: {PARSE_BATCH_SYMBOLS}.",
    )
    parse.add_argument(
        "--batch-size",
        type=POSITIVE_INT,
        default=PARSE_BATCH_SIZE,
        help="The most lines in one batch. Default: %(default)s.",
    )
    add_compute_dtype_argument(
        parse, default=None, where="auto with --run-dir; an export's own"
    )
    parse.set_defaults(handler=_parse)

    export = commands.add_parser(
        "export", help="Export a SavedModel (raw text in, translations out)."
    )
    export.add_argument("--run-dir", required=True, type=run_directory)
    _add_weights_argument(export)
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
    add_compute_dtype_argument(export, auto=False)
    export.set_defaults(handler=_export)

    attention = commands.add_parser(
        "attention", help="Draw one sentence's attention weights as a PNG heatmap."
    )
    attention.add_argument("--run-dir", required=True, type=run_directory)
    _add_weights_argument(attention)
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
