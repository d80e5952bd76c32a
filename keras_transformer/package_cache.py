"""The package's file cache: one folder for what the package keeps between
processes (TensorFlow's op registry for the export check,
`savedmodels/op_compatibility.py`; the decoding search's XLA compilations,
`runs/compile_cache.py`), kept free of heavy imports.

The folder is `$KERAS_TRANSFORMER_CACHE`, else
`$XDG_CACHE_HOME/keras-transformer`, else `~/.cache/keras-transformer`; an
empty `KERAS_TRANSFORMER_CACHE` turns every cache off.
"""

import os

CACHE_ENV = "KERAS_TRANSFORMER_CACHE"


def package_cache_folder(environ=None):
    """The package's cache folder, or `None` where caching is off.

    Args:
        environ: a mapping of environment variables; `None` reads
            `os.environ`.
    """
    environ = os.environ if environ is None else environ
    folder = environ.get(CACHE_ENV)
    if folder is None:
        home = environ.get("XDG_CACHE_HOME") or os.path.join(
            os.path.expanduser("~"), ".cache"
        )
        folder = os.path.join(home, "keras-transformer")
    return folder or None
