"""`keras-transformer`: the argument parser and `main`, which dispatches to
the subcommand's handler. The subcommands, each with its options next to its
handler, are in `training_commands` and `decoding_commands`; options they
share in `options`."""

import contextlib
import sys

from keras_transformer.cli import decoding_commands, training_commands
from keras_transformer.cli.argument_parser import ArgumentParser
from keras_transformer.cli.error_report import report_error
from keras_transformer.cli.options import decoding_overrides

# The commands that train, where a fixed mmap threshold returns XLA's freed
# compile buffers (BUILD_NOTES.md, "Memory"). Not the decoding commands:
# with it, every allocation over 128 KiB is a fresh mmap, which made the
# parsing search slower (docs/experiment-log.md, "glibc's mmap threshold").
MEMORY_TUNED_COMMANDS = ("train", "demo")
# The commands that start without what they never use (`startup.LEAN_IMPORTS`).
LEAN_COMMANDS = ("translate", "parse")


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
    training_commands.add_commands(commands)
    decoding_commands.add_commands(commands)
    return parser


def main(argv=None, owns_process=False):
    """Runs one command; returns its exit status.

    Args:
        argv: list of str, or `None` for `sys.argv[1:]`.
        owns_process: bool. The process ends after the call (the console
            script, `run`): the garbage collector then skips what the imports
            made and, after `translate` and `parse`, what is left at exit
            (`startup.collector_after_imports`, `startup.freeze_for_exit`).
            Defaults to `False`, which changes nothing in the process.
    """
    from keras_transformer.cli.startup import (
        LEAN_IMPORTS,
        collector_after_imports,
        freeze_for_exit,
        import_tensorflow_quietly,
        lean_imports,
        native_log_filter,
        quiet_logs,
    )
    from keras_transformer.process_defaults import tune_memory

    parser = build_parser()
    args = parser.parse_args(argv)
    lean = lean_imports(LEAN_IMPORTS) if args.command in LEAN_COMMANDS else ()
    with collector_after_imports() if owns_process else contextlib.nullcontext():
        import_tensorflow_quietly(args.verbose, without=lean)  # before anything else
    from keras_transformer.cli.option_checks import check_options

    if args.command in MEMORY_TUNED_COMMANDS:
        tune_memory()  # a program's choice, made here (process_defaults)
    try:
        with native_log_filter(args.verbose), quiet_logs(args.verbose):
            check_options(args, decoding_overrides(args))
            args.handler(args)
    except (Exception, KeyboardInterrupt) as error:  # the one error path
        return report_error(
            error, args.command, getattr(args, "run_dir", None), args.debug
        )
    if owns_process and args.command in LEAN_COMMANDS:
        freeze_for_exit()
    return 0


def run():
    """The console script `keras-transformer`: `main` in a process of its own."""
    return main(owns_process=True)


if __name__ == "__main__":
    sys.exit(run())
