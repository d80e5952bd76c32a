"""The training precisions (`Recipe.precision`, `train --precision`), kept
free of heavy imports: the argument parser reads them.

Each is a Keras dtype policy that the model is built with: a policy, not a
code path. `float32` is the paper's. `mixed_float16` (float16 compute,
float32 variables) is for GPUs: Keras wraps the optimiser in a
`LossScaleOptimizer`, whose scale `LossScaleLog` shows. `mixed_bfloat16`
(bfloat16 compute, float32 variables) needs no loss scaling, as bfloat16
keeps float32's exponent range; it is for TPUs and for CPUs with bfloat16
matmuls (AVX-512 BF16 or AMX). Pure `float16` and `bfloat16` (16-bit
variables and Adam moments) are not offered: small updates vanish in them
and training stalls or diverges. Variables, checkpoints, averages and
exports are float32 in every precision (BUILD_NOTES.md, "Mixed-precision
training").
"""

PRECISIONS = ("float32", "mixed_float16", "mixed_bfloat16")
