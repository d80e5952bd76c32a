"""The compute dtypes of decoding (`--compute-dtype`), kept free of heavy
imports: the argument parser reads them."""

# `--compute-dtype`: the Keras dtype policy the model is built with for
# decoding. "bfloat16" holds the weights (rounded from the float32 ones on
# loading), the matmuls, attention and decoding caches in bfloat16, which
# CPUs with AMX run faster (measured on one; AVX-512 BF16 without AMX was
# not); layer normalization and the logsumexp over the vocabulary still
# compute in float32. Keras'
# `mixed_bfloat16` (float32 variables) was not faster: it casts every kernel,
# the 8,000 x 256 output projection included, at every decoding step
# (BUILD_NOTES.md, "bfloat16 decoding").
COMPUTE_DTYPE_POLICIES = {"float32": "float32", "bfloat16": "bfloat16"}


def decodes_with_xla(model):
    """Whether the command line's evaluation decodes `model` with XLA: in
    float32 (XLA's search is the measured default), not in bfloat16, which
    runs in graph mode as the export does (XLA's CPU backend runs bfloat16
    matmuls without AMX, slower than float32; BUILD_NOTES.md, "bfloat16
    decoding")."""
    return model.compute_dtype == "float32"
