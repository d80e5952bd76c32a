"""The `keras-transformer` command line: thin wiring of library functions.

One module per subcommand, each an importable function (`prepare`, `train`,
`average`, `evaluate`, `translate_lines` / `translate_file`, `export`,
`attention`, `evalb`, `run_demo`);
`main` only parses arguments. The command line is the one part of
`keras_transformer` that imports `pipelines` and `savedmodels` (BUILD_NOTES.md,
"Packages").
"""

from keras_transformer.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
