"""The `keras-transformer` command line: a thin shell over the library.

Argument parsing (`main`, `argument_parser`, `option_types`, `options`),
option checks (`option_checks`), printing (`demo_report`, `startup`) and
the one error path (`error_report`). Each subcommand's handler, next to its
options in `training_commands` or `decoding_commands`, maps the options to
one call of the application layer (`keras_transformer.workflows`,
`translation.Translator`, `parsing.Parser`, `runs`). Nothing imports the
command line but its console script and the tests.
"""

from keras_transformer.cli.main import build_parser, main, run

__all__ = ["build_parser", "main", "run"]
