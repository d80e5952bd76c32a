"""The `keras-transformer` command line: thin wiring of library functions."""

import argparse
import dataclasses
import json
import os
import sys


def _demo(args):
    from keras_transformer.toy_task import ToyTaskConfig, run_toy_task

    config = dataclasses.replace(
        ToyTaskConfig(),
        epochs=args.epochs,
        seed=args.seed,
        train_examples=args.train_examples,
    )
    result = run_toy_task(config, verbose=2 if args.quiet else 1)
    report = {
        "task": "reverse a random token sequence (generated data)",
        "exact_match": result["exact_match"],
        "final_loss": result["final_loss"],
        "train_seconds": round(result["train_seconds"], 1),
        "parameters": result["model"].count_params(),
    }
    for source, output in result["examples"]:
        print(f"source {source} -> greedy output {output}")
    print(json.dumps(report))
    if args.output:
        os.makedirs(args.output, exist_ok=True)
        result["model"].save(os.path.join(args.output, "model.keras"))
        with open(os.path.join(args.output, "report.json"), "w") as f:
            json.dump(report, f, indent=2)
        print(f"wrote {args.output}/model.keras and {args.output}/report.json")
    return 0 if result["exact_match"] >= args.min_exact_match else 1


def build_parser():
    parser = argparse.ArgumentParser(
        prog="keras-transformer",
        description="The Transformer of 'Attention Is All You Need' for Keras 3.",
    )
    subcommands = parser.add_subparsers(dest="command", required=True)
    demo = subcommands.add_parser(
        "demo",
        help="Train a small Transformer on a generated reversal task and decode it.",
    )
    demo.add_argument("--epochs", type=int, default=3, help="Training epochs.")
    demo.add_argument(
        "--train-examples", type=int, default=20_000, help="Generated training pairs."
    )
    demo.add_argument("--seed", type=int, default=0, help="Random seed.")
    demo.add_argument("--output", help="Directory for model.keras and report.json.")
    demo.add_argument(
        "--min-exact-match",
        type=float,
        default=0.0,
        help="Exit with status 1 if test exact-match accuracy is below this.",
    )
    demo.add_argument("--quiet", action="store_true", help="One line per epoch.")
    demo.set_defaults(handler=_demo)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
