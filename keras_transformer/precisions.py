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

`auto` (the CPU demos' recipes) is resolved when training starts
(`resolve_precision`): `mixed_bfloat16` on a machine of CPUs only whose CPU
has bfloat16 matmul instructions, where it trains faster than float32 at the
same quality (docs/experiment-log.md, "Mixed-precision training", has the figures);
`float32` elsewhere (name a precision for GPUs and TPUs).
The run keeps `auto`, so a run resumed on another machine resolves it again.
"""

PRECISIONS = ("float32", "mixed_float16", "mixed_bfloat16")
# What a recipe or `train --precision` may name.
PRECISION_CHOICES = (*PRECISIONS, "auto")
# /proc/cpuinfo flags of bfloat16 matmul instructions: x86's AVX-512 BF16 and
# AMX, Arm's BF16 (oneDNN uses each).
BFLOAT16_CPU_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})


def cpu_fields(cpuinfo_path="/proc/cpuinfo"):
    """The first processor's `model name` and instruction flags (`flags` on
    x86, `Features` on Arm) in `cpuinfo_path`, as a dict of str (the others
    repeat them); `{}` where the file cannot be read (not Linux)."""
    fields = {}
    try:
        with open(cpuinfo_path, encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("model name", "flags", "Features") and key not in fields:
                    fields[key] = value.strip()
    except OSError:
        pass
    return fields


def cpu_has_bfloat16_matmuls(cpuinfo_path="/proc/cpuinfo"):
    """Whether the CPU lists a bfloat16 matmul instruction set
    (`BFLOAT16_CPU_FLAGS`) in `cpuinfo_path`; `False` where the file cannot
    be read (not Linux)."""
    fields = cpu_fields(cpuinfo_path)
    flags = fields.get("flags", fields.get("Features", ""))  # x86, Arm
    return bool(BFLOAT16_CPU_FLAGS & set(flags.split()))


def resolve_precision(precision, has_accelerator, cpuinfo_path="/proc/cpuinfo"):
    """The Keras dtype policy a run trains with: `precision`, or for `auto`
    `mixed_bfloat16` when this machine has no GPU or TPU
    (`has_accelerator` false) and its CPU bfloat16 matmuls, else `float32`."""
    if precision != "auto":
        return precision
    if not has_accelerator and cpu_has_bfloat16_matmuls(cpuinfo_path):
        return "mixed_bfloat16"
    return "float32"
