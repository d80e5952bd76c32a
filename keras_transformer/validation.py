"""Eager argument checks with Keras-style errors, for every part of the package.

Layers, configs, recipes, training helpers and the export validate their
arguments with these, so each message has one wording: what was expected, then
`Received: name=value`.
"""

import dataclasses
import math


def check_positive_int(name, value, allow_none=False):
    """Raises a `ValueError` naming `value` unless it is a positive int."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(
            f"Argument `{name}` expected a positive integer. Received: {name}={value!r}"
        )


def check_non_negative_int(name, value):
    """Raises a `ValueError` naming `value` unless it is an int >= 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(
            f"Argument `{name}` expected a non-negative integer. "
            f"Received: {name}={value!r}"
        )


def check_non_negative_float(name, value):
    """Raises a `ValueError` naming `value` unless it is a finite number >= 0."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise ValueError(
            f"Argument `{name}` expected a finite number >= 0. "
            f"Received: {name}={value!r}"
        )


def check_positive_float(name, value, allow_none=False):
    """Raises a `ValueError` naming `value` unless it is a finite number > 0."""
    if value is None and allow_none:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(
            f"Argument `{name}` expected a positive number. Received: {name}={value!r}"
        )


def check_rate(name, value):
    """Raises a `ValueError` naming `value` unless `0 <= value < 1`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(
            f"Argument `{name}` expected a float in [0, 1). Received: {name}={value!r}"
        )
    if not 0.0 <= value < 1.0:
        raise ValueError(
            f"Argument `{name}` expected a float in [0, 1). Received: {name}={value!r}"
        )


def check_one_of(name, value, allowed):
    """Raises a `ValueError` naming `value` unless it is in `allowed`."""
    if value not in allowed:
        raise ValueError(
            f"Argument `{name}` expected one of {sorted(allowed)}. "
            f"Received: {name}={value!r}"
        )


def check_dataclass_fields(cls, names):
    """Raises a `ValueError` naming the `names` that are not fields of the
    dataclass `cls` (a typo, or a record of another package version)."""
    fields = {field.name for field in dataclasses.fields(cls)}
    unknown = sorted(set(names) - fields)
    if unknown:
        raise ValueError(
            f"Unknown {cls.__name__} field(s); expected {sorted(fields)}. "
            f"Received: {unknown}"
        )
