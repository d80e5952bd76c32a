"""The names the package's namespaces export lazily (`lazy_exports`) are
their objects, also once every module of the namespace is imported: Python
sets an imported submodule as an attribute of its package, so an exported
name equal to a submodule's name would read as that module from then on."""

import importlib
import pkgutil
import types

import pytest

LAZY_PACKAGES = [
    "keras_transformer",
    "keras_transformer.parsing",
    "keras_transformer.runs",
    "keras_transformer.translation",
    "keras_transformer.workflows",
]


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_exports_are_their_objects_after_every_submodule_is_imported(name):
    package = importlib.import_module(name)
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{name}.{module.name}")
    exports = package._LAZY
    assert exports, name
    for export, module_name in exports.items():
        value = getattr(package, export)
        if module_name is None:  # a subpackage, exported as itself
            assert isinstance(value, types.ModuleType), export
            continue
        expected = getattr(importlib.import_module(module_name), export)
        assert value is expected, (
            f"{name}.{export} is {value!r}, not {module_name}.{export}"
        )


def test_an_unknown_name_is_an_attribute_error():
    import keras_transformer.parsing

    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = keras_transformer.parsing.nothing_here
