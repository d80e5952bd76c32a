"""Training throughput (target tokens/s), model FLOP/s and MFU on this machine.

Prints one JSON line per setting. Each line has the setting, the measured
training throughput in real target tokens per second, the model FLOPs per
target token, the achieved model FLOP/s, the same process's measured fp32
matmul peak and their ratio (MFU), and peak resident memory.

FLOPs per target token (forward + backward = 3 x forward, multiply-add = 2):
    forward matmul FLOPs per token pair ~ 2 * (non-embedding parameters, each
    used once by the source token and once by the target token, split by
    stack) + 2 * d_model * V (output projection) + attention scores and
    weighted sums (4 * S * d_model per layer and attention, S the length
    attended over). See `model_flops_per_target_token`.

    python benchmarks/training_speed.py                # small and base
    python benchmarks/training_speed.py --configs small --steps 20
    python benchmarks/training_speed.py --configs small --processes 5

Every setting runs in a fresh process of its own, started by this script
(`--one` for Keras, `torch_peer.py` for PyTorch), the frameworks taking turns
in one run. So `peak_rss_gb` (10^9 bytes) and `peak_rss_gib` (2^30 bytes) are
each setting's own peak. A process that fails (a non-zero exit status, a
signal) gives a line with `"error"` (its exit status and stderr's last line)
and `"stderr"` (its end), and the other settings go on.

`--peers torch` also times PyTorch's `nn.Transformer` on each setting
(`torch_peer.py`, given the preset's numbers on its command line; its line
names the torch build). The peer's process never imports TensorFlow, Keras or
this package: a PyTorch training in a process that had imported TensorFlow
ended with a segmentation fault (exit status -11, torch 2.14.1 and
2.13.0+cpu on Intel Sapphire Rapids, bfloat16 autocast). `--precision float32
mixed_bfloat16` measures each setting in each training precision (the Keras
dtype policy; PyTorch's peer runs its forward pass and loss under
`torch.autocast("cpu", dtype=torch.bfloat16)`, the bfloat16 peer); every line
carries `"precision"`:

    python benchmarks/training_speed.py --configs small base --jit false \
        --precision float32 mixed_bfloat16 --peers torch

`--real` also trains `small` the way `keras-transformer train` does, on the
bundled corpus's bucketed batches (`bucketed_training.py`, one fresh process
per run of `BUCKETED_RUNS`: graph mode on the demo recipe's buckets, on
tensor2tensor's x1.1 from 8 and on x2, XLA on x2 with an empty compilation
cache, XLA again with the first XLA run's cache; `--real-runs` picks some),
before the fixed-shape settings and peers of this
process; its lines carry `"pipeline": "bucketed"`, the others `"fixed"`:

    python benchmarks/training_speed.py --configs small --real --peers torch

`--loss-chunk-sizes 512 none` compares the fused, chunked output loss (the
default) with the loss on the full `[B, T, V]` logits. For their memory, run
each in its own process (`peak_rss_gb` is per process).

With `--processes N` each setting runs in N fresh processes, one after
another, and the median process's line is printed with every process's
`seconds_per_step` (`process_repeats.py`: this machine's speed varies by
process, not by step).
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# The package's oneDNN default, set by its owner before keras (and so
# TensorFlow) is imported.
from keras_transformer.process_defaults import set_onednn_default  # noqa: E402

set_onednn_default()

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from process_repeats import add_processes_argument, repeat_in_processes  # noqa: E402
from throughput_record import throughput_record, with_peak_and_memory  # noqa: E402

from keras_transformer import TransformerConfig, build_transformer  # noqa: E402
from keras_transformer.precisions import PRECISIONS  # noqa: E402
from keras_transformer.process_defaults import tune_memory  # noqa: E402
from keras_transformer.recipes import get_recipe  # noqa: E402
from keras_transformer.training import compile_transformer  # noqa: E402

# A program's process-wide choice (the command line makes it too): glibc's
# mmap threshold fixed, so XLA's freed compile buffers leave the process.
tune_memory()

CONFIGS = {
    # The benchmark config: vocab 8,000, d_model 256, 4 heads, d_ff
    # 1024, 3+3 layers, batches of 64 pairs x 32 + 32 tokens.
    "small": dict(
        model=dict(
            num_layers=3, d_model=256, d_ff=1024, num_heads=4, source_vocab_size=8000
        ),
        batch=64,
        length=32,
    ),
    # base with a 32k vocabulary, 128 pairs x 32 tokens (~4k tokens a side).
    "base": dict(
        model=dict(source_vocab_size=32000),
        batch=128,
        length=32,
    ),
}


def matmul_peak_gflops(size=2048, repeats=10):
    """fp32 GFLOP/s of a square matmul in this process (best of `repeats`)."""
    a = tf.random.normal((size, size))
    b = tf.random.normal((size, size))
    matmul = tf.function(lambda x, y: tf.matmul(x, y))
    matmul(a, b).numpy()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        matmul(a, b).numpy()
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best / 1e9


def model_flops_per_target_token(config, source_length, target_length):
    """Training FLOPs per target token (3 x forward), see the module docstring."""
    d, f, n = config.d_model, config.d_ff, config.num_layers
    h = config.num_heads
    attention = 2 * d * h * config.key_dim + d * h * config.value_dim * 2
    feed_forward = 2 * d * f
    # Per token, multiply-adds of the linear maps (x2 for FLOPs).
    encoder_per_token = 2 * (attention + feed_forward)
    decoder_per_token = 2 * (2 * attention + feed_forward)
    # Attention scores and weighted sums: 2 * 2 * length * (d_k or d_v) * h.
    encoder_attention = 4 * source_length * d
    decoder_attention = 4 * target_length * d / 2 + 4 * source_length * d
    output = 2 * d * config.output_vocab_size
    ratio = source_length / target_length  # source tokens per target token
    forward = (
        n
        * (
            ratio * (encoder_per_token + encoder_attention)
            + decoder_per_token
            + decoder_attention
        )
        + output
    )
    return 3 * forward


def run(name, steps, jit_compile, loss_chunk_size=512, precision="float32"):
    setting = CONFIGS[name]
    keras.utils.set_random_seed(0)
    config = TransformerConfig(**setting["model"])
    model = build_transformer(config, dtype=precision)
    compile_transformer(model, jit_compile=jit_compile, loss_chunk_size=loss_chunk_size)
    batch, length = setting["batch"], setting["length"]
    rng = np.random.default_rng(0)
    source = rng.integers(4, config.source_vocab_size, (batch, length)).astype("int32")
    target = rng.integers(4, config.source_vocab_size, (batch, length)).astype("int32")
    inputs = {"source_ids": source, "target_ids": target}
    dataset = tf.data.Dataset.from_tensors((inputs, target)).repeat()
    model.fit(dataset, steps_per_epoch=3, epochs=1, verbose=0)  # compile, warm up
    timer = _StepTimer()
    start = time.perf_counter()
    model.fit(dataset, steps_per_epoch=steps, epochs=1, verbose=0, callbacks=[timer])
    fit_seconds = time.perf_counter() - start
    seconds = timer.last_end - timer.first_begin
    flops = model_flops_per_target_token(config, length, length)
    record = throughput_record(
        name, "keras", jit_compile, steps, seconds, batch, length, flops
    )
    return {
        **record,
        "precision": precision,
        "keras_version": keras.__version__,
        "tensorflow_version": tf.__version__,
        "pipeline": "fixed",
        "loss_chunk_size": loss_chunk_size,
        # The rest of `fit`'s wall time (setup and teardown), once per call.
        "fit_overhead_seconds": round(fit_seconds - seconds, 2),
    }


class _StepTimer(keras.callbacks.Callback):
    """The first step's start and the last step's end (the steps run in sync).

    `fit` also spends time outside its steps, once per call: at its end the
    main thread sometimes waited, idle, after the last step's callbacks,
    while the dataset iterator's destructor waited for tf.data's autotuning
    thread (docs/experiment-log.md, "tf.data autotuning is off"), which made
    the wall time of a short `fit` overstate the step time. It is reported
    as `fit_overhead_seconds`.
    """

    def on_train_batch_begin(self, batch, logs=None):
        if batch == 0:
            self.first_begin = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self.last_end = time.perf_counter()


def torch_peer_command(name, steps, precision="float32"):
    """The command line of `torch_peer.py` (PyTorch's `nn.Transformer`, a
    peer of the issue) for setting `name`: its preset's numbers and our model
    FLOPs per target token. The peer imports no TensorFlow, Keras or this
    package, so it runs in a process of its own (`measure_in_a_process`)."""
    setting = CONFIGS[name]
    config = TransformerConfig(**setting["model"])
    batch, length = setting["batch"], setting["length"]
    if config.output_vocab_size != config.source_vocab_size:
        raise ValueError("The PyTorch peer shares one vocabulary.")
    return [
        sys.executable,
        TORCH_PEER,
        f"--config={name}",
        f"--steps={steps}",
        f"--precision={precision}",
        f"--batch={batch}",
        f"--length={length}",
        f"--num-layers={config.num_layers}",
        f"--d-model={config.d_model}",
        f"--num-heads={config.num_heads}",
        f"--d-ff={config.d_ff}",
        f"--vocab-size={config.source_vocab_size}",
        f"--dropout={config.dropout!r}",
        f"--flops-per-target-token="
        f"{model_flops_per_target_token(config, length, length)!r}",
    ]


TORCH_PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_peer.py")
# The peer's precisions: bfloat16 autocast or none (torch_peer.TORCH_AUTOCAST,
# not imported: the peer's module stays out of this process).
TORCH_PRECISIONS = ("float32", "mixed_bfloat16")


# `--real` runs: (name, path, bucket scale, first bucket length); `None`
# is the demo recipe's own. XLA on x2 buckets only (x1.1 would compile each
# of its ~480 shapes).
BUCKETED_RUNS = (
    ("graph", "graph", None, None),  # the demo recipe's buckets
    ("graph_x1.1_min8", "graph", 1.1, 8),  # tensor2tensor's
    ("graph_x2", "graph", 2.0, 8),
    ("xla_cold", "xla", 2.0, 8),
    ("xla_cached", "xla", 2.0, 8),  # with xla_cold's executables
)


def run_bucketed(steps, precisions=("float32",), names=None):
    """`bucketed_training.py` in a fresh process per run (`BUCKETED_RUNS`, or
    those of `names`) and precision; prints its lines."""
    script = os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "bucketed_training.py"
    )
    demo = get_recipe("demo")
    with tempfile.TemporaryDirectory() as root:
        for precision in precisions:
            for name, path, scale, min_length in BUCKETED_RUNS:
                if names and name not in names:
                    continue
                run_dir = os.path.join(root, precision, name)
                if name == "xla_cached":  # the cold run's executables only
                    shutil.copytree(
                        os.path.join(root, precision, "xla_cold", "xla_cache"),
                        os.path.join(run_dir, "xla_cache"),
                    )
                scale = scale or demo.bucket_scale
                min_length = min_length or demo.min_bucket_length
                command = [script, path, run_dir, str(steps), str(scale)]
                command += [precision, str(min_length)]
                output = subprocess.run(
                    [sys.executable, *command],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                for line in output.splitlines():
                    if line[:1] == "{":
                        record = {**json.loads(line), "run": name}
                        print(json.dumps(record), flush=True)


def _chunk_size(text):
    return None if text.lower() == "none" else int(text)


def measure(setting):
    """Runs one Keras setting (`--one`) in this process and returns its line."""
    result = run(
        setting["config"],
        setting["steps"],
        setting["jit_compile"],
        setting["loss_chunk_size"],
        setting["precision"],
    )
    return with_peak_and_memory(result, matmul_peak_gflops())


def measure_in_a_process(setting):
    """A setting's line from a fresh process: `measure(setting)` (`--one`)
    for Keras, `torch_peer.py` for PyTorch. A failed process (a non-zero
    exit status, a signal, no JSON line) is reported as a line (`"error"`:
    the exit status and stderr's last line; `"stderr"`: its end) and the
    other settings go on."""
    if setting["framework"] == "pytorch":
        command = torch_peer_command(
            setting["config"], setting["steps"], setting["precision"]
        )
    else:
        command = [sys.executable, os.path.abspath(__file__), "--one"]
        command.append(json.dumps(setting))
    result = subprocess.run(command, capture_output=True, text=True)
    lines = [line for line in result.stdout.splitlines() if line[:1] == "{"]
    if result.returncode == 0 and lines:
        return json.loads(lines[-1])
    return {**setting, **_failure(result.returncode, result.stderr)}


def _failure(returncode, stderr):
    """The error fields of a process that exited with `returncode`."""
    status = f"exit status {returncode}"
    if returncode < 0:  # killed by a signal
        try:
            status += f" ({signal.Signals(-returncode).name})"
        except ValueError:
            pass
    elif returncode == 0:
        status += ", no JSON line"
    last = stderr.strip().splitlines()[-1:] or [""]
    if last[0]:
        status += f": {last[0]}"
    return {"error": status, "stderr": stderr[-500:]}


def settings(args):
    """Each config, in each precision: the Keras settings, then the peers."""
    for name in args.configs:
        for precision in args.precision:
            common = {"config": name, "steps": args.steps, "precision": precision}
            for jit in args.jit:
                for chunk in args.loss_chunk_sizes:
                    yield {
                        **common,
                        "framework": "keras",
                        "jit_compile": jit == "true",
                        "loss_chunk_size": _chunk_size(chunk),
                    }
            for _ in args.peers:
                if precision in TORCH_PRECISIONS:
                    yield {**common, "framework": "pytorch"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--configs", nargs="+", default=["small", "base"])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--jit", nargs="+", default=["false", "true"])
    parser.add_argument(
        "--precision",
        nargs="+",
        default=["float32"],
        choices=PRECISIONS,
        help="Training precisions, one setting each. Default: float32.",
    )
    parser.add_argument(
        "--loss-chunk-sizes",
        nargs="+",
        default=["512"],
        help="compile_transformer's loss_chunk_size, or 'none' for the loss "
        "on logits; one setting each.",
    )
    parser.add_argument(
        "--peers",
        nargs="*",
        default=[],
        choices=["torch"],
        help="Also time these peers on each config and precision (float32 "
        "and mixed_bfloat16), each in its own process.",
    )
    parser.add_argument(
        "--real",
        action="store_true",
        help="Also train small on the bundled corpus's bucketed batches, as "
        "`train` does (graph, XLA cold, XLA with the cache), first.",
    )
    parser.add_argument(
        "--real-steps",
        type=int,
        default=150,
        help="Updates per --real run (a multiple of 50). Default: 150.",
    )
    parser.add_argument(
        "--real-runs",
        nargs="+",
        choices=[run[0] for run in BUCKETED_RUNS],
        help="Only these --real runs (xla_cached needs xla_cold). Default: all.",
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a setting, as JSON
    add_processes_argument(parser)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(json.loads(args.one))), flush=True)
        return
    if repeat_in_processes(__file__, args.processes, "seconds_per_step"):
        return
    if args.real:
        run_bucketed(args.real_steps, args.precision, args.real_runs)
    for setting in settings(args):
        print(json.dumps(measure_in_a_process(setting)), flush=True)


if __name__ == "__main__":
    main()
