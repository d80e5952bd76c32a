"""Run directories: a recipe's data prepared, a run trained, averaged and
loaded, with the same run directory as the command line (`RunDirectory`
documents its layout; `keras_transformer.workflows` calls them in order).

Application layer (BUILD_NOTES.md, "Packages"): may import the core of
`keras_transformer`, `pipelines` and `savedmodels`. Errors are `UserError`
(a `ValueError`) or `MissingFileError` (also a `FileNotFoundError`), one
message naming the bad value; nothing here exits the process."""

from keras_transformer.lazy_exports import lazy_exports

_LAZY = {
    "RunDirectory": "keras_transformer.runs.run_directory",
    "LoadedRun": "keras_transformer.runs.loaded_run",
    "load_run": "keras_transformer.runs.loaded_run",
    "UserError": "keras_transformer.runs.user_error",
    "MissingFileError": "keras_transformer.runs.user_error",
    "COMPUTE_DTYPE_POLICIES": "keras_transformer.runs.compute_dtypes",
    "import_marian": "keras_transformer.runs.marian_import",
}

__all__ = [
    "COMPUTE_DTYPE_POLICIES",
    "LoadedRun",
    "MissingFileError",
    "RunDirectory",
    "UserError",
    "import_marian",
    "load_run",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
