"""Helpers shared by the layers: eager argument checks (Keras-style errors) and
initializer cloning."""


def check_positive_int(name, value, allow_none=False):
    """Raises a `ValueError` naming `value` unless it is a positive int."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(
            f"Argument `{name}` expected a positive integer. Received: {name}={value!r}"
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


def clone_initializer(initializer):
    """A fresh copy, so two sublayers never draw the same initial values."""
    return initializer.__class__.from_config(initializer.get_config())


def head_dims(hidden_dim, num_heads, key_dim=None, value_dim=None):
    """Returns (d_k, d_v), deriving either as d_model / h when not given (§3.2.2)."""
    if (key_dim is None or value_dim is None) and hidden_dim % num_heads:
        raise ValueError(
            "d_model must be divisible by num_heads when key_dim or value_dim is "
            f"derived from it. Received: d_model={hidden_dim}, num_heads={num_heads}"
        )
    derived = hidden_dim // num_heads
    return (key_dim or derived), (value_dim or derived)
