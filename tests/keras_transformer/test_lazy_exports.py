"""The names the package's namespaces export lazily (`lazy_exports`) are
their objects, also once every module of the namespace is imported: Python
sets an imported submodule as an attribute of its package, so an exported
name equal to a submodule's name would read as that module from then on."""

import importlib
import pkgutil
import types

import pytest

import keras_transformer


def _lazy_packages():
    """The package and its subpackages that export names lazily (`_LAZY`),
    found by walking them, so that a new one is checked too."""
    names = ["keras_transformer"] + [
        info.name
        for info in pkgutil.walk_packages(
            keras_transformer.__path__, "keras_transformer."
        )
        if info.ispkg
    ]
    return [name for name in names if hasattr(importlib.import_module(name), "_LAZY")]


LAZY_PACKAGES = _lazy_packages()


def test_the_walk_finds_the_lazy_packages():
    assert {"keras_transformer", "keras_transformer.parsing"} <= set(LAZY_PACKAGES)


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
