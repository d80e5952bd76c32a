"""Argument parsing for `keras-transformer`; each subcommand calls one function."""

import argparse
import json
import os
import sys

from keras_transformer.cli.user_error import UserError


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
    for field in ("train_steps", "train_minutes"):
        value = getattr(args, field, None)
        if value is not None:
            overrides[field] = value
    return get_recipe(args.recipe, **overrides)


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
        method=args.method,
        beam_size=args.beam_size,
        alpha=args.alpha,
        paper_style=args.paper_style,
    )


def _translate(args):
    from keras_transformer.cli.translate import load_translator, translate_lines

    if args.input != "-" and not os.path.exists(args.input):
        raise UserError(f"No such input file: {args.input}")
    translator = load_translator(
        args.run_dir, args.export, args.weights, max_beam_size=args.beam_size
    )
    progress = sys.stderr if args.input != "-" and sys.stderr.isatty() else None
    if args.input == "-":
        translate_lines(translator, sys.stdin, **_decoding(args))
        return
    with open(args.input, encoding="utf-8", errors="replace") as f:
        total = sum(1 for _ in f)
    with open(args.input, encoding="utf-8", errors="replace") as f:
        translate_lines(
            translator, f, total=total, progress=progress, **_decoding(args)
        )


def _decoding(args):
    return {
        "beam_size": args.beam_size,
        "alpha": args.alpha,
        "max_extra_length": args.max_extra_length,
        "n_best": args.n_best,
        "batch_size": args.batch_size,
    }


def _export(args):
    from keras_transformer.cli.export import export

    export(
        args.run_dir,
        weights=args.weights,
        version=args.version,
        overwrite=args.overwrite,
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


def _demo(args):
    from keras_transformer.cli.demo import run_demo
    from keras_transformer.recipes import get_recipe

    overrides = _overrides(args.set)
    overrides["train_minutes"] = args.minutes
    run_demo(
        get_recipe("demo", **overrides),
        args.output,
        test_sentences=args.test_sentences,
        examples=args.examples,
        verbose=2 if args.quiet else 1,
    )


def _recipes(args):
    from keras_transformer.recipes import RECIPES

    for name, recipe in RECIPES.items():
        if args.name in (None, name):
            print(f"{name}: {recipe.description}")
            if args.name:
                model = recipe.model_config(recipe.vocab_size).to_dict()
                print(json.dumps({**recipe.to_dict(), "model": model}, indent=2))


def _add_recipe_arguments(parser, steps=False):
    parser.add_argument("--recipe", required=True, help="Recipe name (see `recipes`).")
    parser.add_argument("--run-dir", required=True, help="The run directory.")
    parser.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="Override a recipe field (repeatable), e.g. --set warmup_steps=8000 "
        "or --set model.dropout=0.2.",
    )
    if steps:
        parser.add_argument("--train-steps", type=int, help="Updates to train for.")
        parser.add_argument(
            "--train-minutes", type=float, help="Wall-clock budget in minutes."
        )


def _add_decoding_arguments(parser):
    parser.add_argument("--beam-size", type=int, default=4, help="Beam size (§6.1: 4).")
    parser.add_argument("--alpha", type=float, default=0.6, help="Length penalty.")
    parser.add_argument(
        "--max-extra-length", type=int, default=50, help="Output length = input + N."
    )


def build_parser():
    parser = argparse.ArgumentParser(
        prog="keras-transformer",
        description="The Transformer of 'Attention Is All You Need' for Keras 3: "
        "prepare -> train -> average -> evaluate -> export -> translate.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser(
        "demo",
        help="Train, average, evaluate, export and reload a small English-German "
        "model on the bundled corpus (about 10 minutes on 2 CPU cores).",
    )
    demo.add_argument("--minutes", type=float, default=10.0, help="Training minutes.")
    demo.add_argument(
        "--output", default="keras-transformer-demo", help="The run directory."
    )
    demo.add_argument(
        "--test-sentences", type=int, help="Score only the first N test sentences."
    )
    demo.add_argument(
        "--examples", type=int, default=5, help="Test sentences shown at the end."
    )
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
        "--xla", default="auto", choices=["auto", "on", "off"], help="jit_compile."
    )
    train.set_defaults(handler=_train)

    average = commands.add_parser(
        "average", help="Average the last checkpoints of a run (§6.1)."
    )
    average.add_argument("--run-dir", required=True)
    average.add_argument("--last", type=int, help="How many (default: the recipe's).")
    average.set_defaults(handler=_average)

    evaluate = commands.add_parser(
        "evaluate", help="Translate a held-out split and score it with sacreBLEU."
    )
    evaluate.add_argument("--run-dir", required=True)
    evaluate.add_argument("--split", help="Default: the recipe's test split.")
    evaluate.add_argument("--weights", help="Default: newest averaged, else newest.")
    evaluate.add_argument("--limit", type=int, help="Only the first N sentences.")
    evaluate.add_argument("--method", default="beam", choices=["beam", "greedy"])
    evaluate.add_argument("--beam-size", type=int, help="Default: the recipe's.")
    evaluate.add_argument("--alpha", type=float, help="Default: the recipe's.")
    evaluate.add_argument(
        "--paper-style",
        action="store_true",
        help="Also the paper's tokenized, compound-split BLEU (Table 2 only).",
    )
    evaluate.set_defaults(handler=_evaluate)

    translate = commands.add_parser(
        "translate", help="Translate lines of a file or stdin to stdout."
    )
    translate.add_argument("--run-dir", help="Translate with a run's weights.")
    translate.add_argument("--export", help="Or with an exported SavedModel version.")
    translate.add_argument("--weights", help="With --run-dir: a weights file.")
    translate.add_argument("--input", default="-", help="Input file; - for stdin.")
    _add_decoding_arguments(translate)
    translate.add_argument("--n-best", type=int, default=1, help="Hypotheses per line.")
    translate.add_argument("--batch-size", type=int, default=32)
    translate.set_defaults(handler=_translate)

    export = commands.add_parser(
        "export", help="Export a SavedModel (raw text in, translations out)."
    )
    export.add_argument("--run-dir", required=True)
    export.add_argument("--weights", help="Default: newest averaged, else newest.")
    export.add_argument("--version", type=int, help="Default: the next free number.")
    export.add_argument("--overwrite", action="store_true")
    export.add_argument(
        "--tf-text-version",
        default="2.20",
        help="tensorflow-text release of the target TF Serving, for the op check "
        "('none' skips it).",
    )
    export.set_defaults(handler=_export)

    attention = commands.add_parser(
        "attention", help="Draw one sentence's attention weights as a PNG heatmap."
    )
    attention.add_argument("--run-dir", required=True)
    attention.add_argument("--weights", help="Default: newest averaged, else newest.")
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
    attention.add_argument("--png", required=True, help="Output image path.")
    attention.set_defaults(handler=_attention)
    return parser


def main(argv=None):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.handler(args)
    except (UserError, ValueError) as error:
        print(f"keras-transformer {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"keras-transformer {args.command}: interrupted; run the same command "
            "again to resume.",
            file=sys.stderr,
        )
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
