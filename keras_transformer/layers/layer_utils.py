"""Helpers shared by the layers: initializer cloning and head sizes.

Argument checks live in `keras_transformer.validation`."""


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
