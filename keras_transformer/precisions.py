"""The training precisions (`Recipe.precision`, `train --precision`), kept
free of heavy imports: the argument parser reads them.

Each is a Keras dtype policy that the model is built with (DESIGN: precision
is a policy, not a code path). `float32` is the paper's. `mixed_float16`
(float16 compute, float32 variables) is for GPUs: Keras wraps the optimiser
in a `LossScaleOptimizer`, whose scale `LossScaleLog` shows. `mixed_bfloat16`
(bfloat16 compute, float32 variables) needs no loss scaling: bfloat16 keeps
float32's exponent range; it is for TPUs and CPUs with AMX. Pure `float16`
or `bfloat16` (float16 variables and Adam moments) is not offered: its
updates underflow and training diverges. Variables, checkpoints, averages
and exports are float32 in every precision (BUILD_NOTES.md, "Mixed
precision").
"""

PRECISIONS = ("float32", "mixed_float16", "mixed_bfloat16")
