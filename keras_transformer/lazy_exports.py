"""Names a package exports, imported on first use (PEP 562), so that
importing the package imports nothing heavy (TensorFlow above all)."""

import importlib


def lazy_exports(package, names):
    """`(__getattr__, __dir__)` for `package` (its `__name__`) exporting
    `names`, `{name: module}`: the first use of a name imports its module
    and caches the value in the package; a name whose module is `None` is a
    subpackage of `package`, imported on first use."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name):
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if names[name] is None:
            return importlib.import_module(f"{package}.{name}")
        value = getattr(importlib.import_module(names[name]), name)
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
