"""The command line tests' shared tiny run and its export (built once per
test run, `tests/shared_build.py`), for the library's tests."""

from tests.keras_transformer.cli.conftest import (  # noqa: F401 (fixtures)
    exported_run,
    tiny_run,
)
