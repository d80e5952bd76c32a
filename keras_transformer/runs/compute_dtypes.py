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
# What `--compute-dtype` may name: a policy, or `auto` (`resolve_compute_dtype`).
COMPUTE_DTYPE_CHOICES = (*COMPUTE_DTYPE_POLICIES, "auto")


def resolve_compute_dtype(
    compute_dtype, has_accelerator=None, cpuinfo_path="/proc/cpuinfo"
):
    """The compute dtype a decoding runs in: `compute_dtype`, or for `auto`
    `"bfloat16"` where training's `precision="auto"` trains in
    `mixed_bfloat16` (`precisions.resolve_precision`: no GPU or TPU, and a
    CPU with bfloat16 matmuls), else `"float32"`. bfloat16 decoding measured
    faster on such CPUs at the same BLEU and F1 within their noise
    (BUILD_NOTES.md, "bfloat16 decoding").

    Args:
        compute_dtype: `"float32"`, `"bfloat16"` or `"auto"`.
        has_accelerator: bool, or `None` to ask TensorFlow
            (`training.distribution.has_accelerator`).
        cpuinfo_path: str. Where the CPU's flags are read.

    Raises:
        ValueError: another `compute_dtype`.
    """
    from keras_transformer.precisions import resolve_precision
    from keras_transformer.validation import check_one_of

    check_one_of("compute_dtype", compute_dtype, COMPUTE_DTYPE_CHOICES)
    if compute_dtype != "auto":
        return compute_dtype
    if has_accelerator is None:
        from keras_transformer.training.distribution import has_accelerator as ask

        has_accelerator = ask()
    precision = resolve_precision("auto", has_accelerator, cpuinfo_path)
    return "bfloat16" if precision == "mixed_bfloat16" else "float32"


def decodes_with_xla(model):
    """Whether the command line's evaluation decodes `model` with XLA: in
    float32 (XLA's search is the measured default), not in bfloat16, which
    runs in graph mode as the export does (XLA's CPU backend runs bfloat16
    matmuls without AMX, slower than float32; BUILD_NOTES.md, "bfloat16
    decoding")."""
    return model.compute_dtype == "float32"
