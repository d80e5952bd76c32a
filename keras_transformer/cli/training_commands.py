"""The subcommands that make a run: `demo`, `recipes`, `prepare`, `train`,
`average`, `import-marian`; each one's options next to its handler."""

import json

from keras_transformer.cli.option_types import (
    NON_NEGATIVE_INT,
    POSITIVE_FLOAT,
    POSITIVE_INT,
    run_directory,
)
from keras_transformer.cli.options import (
    add_corpus_arguments,
    add_precision_argument,
    add_recipe_arguments,
    corpus_parts,
    recipe_from_arguments,
    set_overrides,
)
from keras_transformer.runs.user_error import UserError


def _demo(args):
    from keras_transformer.cli.demo_report import print_report
    from keras_transformer.recipes import get_recipe
    from keras_transformer.workflows.demo import DEMO_RECIPES, run_demo

    overrides = set_overrides(args.set)
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
    recipe = get_recipe(DEMO_RECIPES[args.task], **overrides)
    report = run_demo(
        recipe,
        args.output,
        test_sentences=args.test_sentences,
        examples=args.examples,
        verbose=2 if args.quiet else 1,
        dev_sentences=args.dev_sentences,
    )
    print_report(recipe, report, args.output)


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


def _prepare(args):
    from keras_transformer.runs.prepare import prepare

    prepare(recipe_from_arguments(args), args.run_dir, verbose=1)


def _train(args):
    from keras_transformer.runs.train import train

    jit = {"auto": "auto", "on": True, "off": False}[args.xla]
    train(
        recipe_from_arguments(args),
        args.run_dir,
        verbose=1,
        strategy=args.strategy,
        jit_compile=jit,
    )


def _average(args):
    from keras_transformer.runs.average import average

    average(args.run_dir, last=args.last, verbose=1)


def _import_marian(args):
    from keras_transformer.runs.marian_import import import_marian

    import_marian(
        args.hf_dir,
        args.run_dir,
        source_language=args.source_language,
        target_language=args.target_language,
        verbose=1,
        **corpus_parts(args, ("dev", "test")),
    )


def add_commands(commands):
    """Adds these subcommands, each with its options and handler, to
    `commands` (the `add_subparsers` of `build_parser`)."""
    demo = commands.add_parser(
        "demo",
        help="Train, average, evaluate, export and reload a small English-German "
        "model on the bundled corpus (a fixed number of updates; minutes on 2 CPU "
        "cores, measured in docs/results.md).",
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
    add_precision_argument(demo)
    demo.add_argument("--set", action="append", metavar="KEY=VALUE", help="As train.")
    demo.add_argument("--quiet", action="store_true", help="One line per epoch.")
    demo.set_defaults(handler=_demo)

    recipes = commands.add_parser("recipes", help="List the recipes, or show one.")
    recipes.add_argument("name", nargs="?", help="Show this recipe's settings.")
    recipes.set_defaults(handler=_recipes)

    prepare = commands.add_parser(
        "prepare", help="Train or load the tokenizer; tokenize and cache the data."
    )
    add_recipe_arguments(prepare)
    prepare.set_defaults(handler=_prepare)

    train = commands.add_parser(
        "train", help="Train a recipe (resumes when run again in the same directory)."
    )
    add_recipe_arguments(train, steps=True)
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
        "no faster (docs/experiment-log.md, Training on the bucketed pipeline).",
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

    imported = commands.add_parser(
        "import-marian",
        help="Make a run directory from a downloaded Hugging Face Marian (OPUS-MT) "
        "folder; then translate, evaluate and export it as a trained run.",
    )
    imported.add_argument(
        "hf_dir",
        help="The model folder: config.json, model.safetensors (or "
        "pytorch_model.bin, read with torch), source.spm, target.spm, vocab.json.",
    )
    imported.add_argument("--run-dir", required=True, type=run_directory)
    add_corpus_arguments(imported, ("dev", "test"))
    imported.add_argument(
        "--source-language",
        help="Source language code; default: the folder's tokenizer_config.json.",
    )
    imported.add_argument(
        "--target-language",
        help="Target language code (BLEU's tokenizer follows it); default: the "
        "folder's tokenizer_config.json, else language-neutral.",
    )
    imported.set_defaults(handler=_import_marian)
