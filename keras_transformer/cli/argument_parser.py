"""The command line's `argparse.ArgumentParser`: a bad option is one line."""

import argparse


class ArgumentParser(argparse.ArgumentParser):
    """`argparse.ArgumentParser` whose errors are one line on stderr, exit
    status 2, like every other user error of the command line (the usage
    text is one `--help` away, and named in the line). Subcommand parsers
    are of this class too (`add_subparsers` uses the parent's class)."""

    def error(self, message):
        message = " ".join(message.split())  # a value may hold line breaks
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")
