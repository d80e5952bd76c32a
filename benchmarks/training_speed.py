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

Every setting runs in a fresh process of its own (`--one`, started by this
script), the frameworks taking turns in one run: a PyTorch started in a
process where TensorFlow had trained died with a segmentation fault (the
CUDA build of torch 2.14.1). So `peak_rss_gb` (10^9 bytes) and `peak_rss_gib`
(2^30 bytes) are each setting's own peak.

`--peers torch` also times PyTorch's `nn.Transformer` on each setting
(`run_torch`; its line names the torch build). `--precision float32
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
import resource
import shutil
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# The package's documented CPU default (keras_transformer.process_defaults),
# set here because keras (and so TensorFlow) is imported first.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from process_repeats import add_processes_argument, repeat_in_processes  # noqa: E402

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
    record = _record(name, "keras", jit_compile, steps, seconds, config, batch, length)
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
    main thread sometimes waited, idle, 13-40 s after the last step's
    callbacks, while the dataset iterator's destructor waited for tf.data's
    autotuning thread (BUILD_NOTES.md, "Speed"). That made the wall time of
    a 3-step `fit` report 13.65 s per 9.2 s step. It is reported as
    `fit_overhead_seconds`.
    """

    def on_train_batch_begin(self, batch, logs=None):
        if batch == 0:
            self.first_begin = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self.last_end = time.perf_counter()


def _record(name, framework, jit_compile, steps, seconds, config, batch, length):
    tokens_per_second = steps * batch * length / seconds
    flops_per_token = model_flops_per_target_token(config, length, length)
    achieved = tokens_per_second * flops_per_token / 1e9
    return {
        "config": name,
        "framework": framework,
        "jit_compile": jit_compile,
        "batch": f"{batch} x {length}+{length}",
        "steps": steps,
        "seconds_per_step": round(seconds / steps, 4),
        "target_tokens_per_second": round(tokens_per_second, 1),
        "mflop_per_target_token": round(flops_per_token / 1e6, 1),
        "model_gflops": round(achieved, 1),
    }


def run_torch(name, steps, precision="float32"):
    """The same setting with PyTorch's `nn.Transformer`, a peer of the issue.

    Post-norm, sinusoidal positions, one embedding shared by source, target
    and the output projection, label-smoothed (0.1) cross-entropy ignoring
    padding, Adam(0.9, 0.98, 1e-9), the config's dropout, 2 threads; random
    tokens as in `run`. In `mixed_bfloat16` the forward pass and the loss run
    under `torch.autocast("cpu", dtype=torch.bfloat16)` (float32 parameters,
    as Keras' policy). Needs `torch` (`pip install torch==2.13.0` takes a
    CPU build here; the line's `torch_version` names the build measured).
    """
    import torch  # noqa: PLC0415 (optional peer)
    from torch import nn  # noqa: PLC0415

    setting = CONFIGS[name]
    config = TransformerConfig(**setting["model"])
    batch, length = setting["batch"], setting["length"]
    d, vocab = config.d_model, config.source_vocab_size
    torch.manual_seed(0)
    torch.set_num_threads(2)
    position = np.arange(length)[:, None] / 10000 ** (np.arange(0, d, 2) / d)
    positions = np.zeros((length, d), "float32")
    positions[:, 0::2], positions[:, 1::2] = np.sin(position), np.cos(position)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(vocab, d, padding_idx=0)
            self.transformer = nn.Transformer(
                d,
                config.num_heads,
                config.num_layers,
                config.num_layers,
                config.d_ff,
                dropout=config.dropout,
                batch_first=True,
            )
            self.register_buffer("positions", torch.from_numpy(positions))
            self.register_buffer(
                "causal", nn.Transformer.generate_square_subsequent_mask(length)
            )

        def forward(self, source, target):
            embed = lambda ids: self.embedding(ids) * d**0.5 + self.positions  # noqa: E731
            hidden = self.transformer(
                embed(source), embed(target), tgt_mask=self.causal, tgt_is_causal=True
            )
            return hidden @ self.embedding.weight.T

    model = Model()
    optimizer = torch.optim.Adam(
        model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9
    )
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=0)
    rng = np.random.default_rng(0)
    source = torch.from_numpy(rng.integers(4, vocab, (batch, length)))
    target = torch.from_numpy(rng.integers(4, vocab, (batch, length)))

    if precision not in TORCH_AUTOCAST:
        raise ValueError(
            f"The PyTorch peer runs {sorted(TORCH_AUTOCAST)}. "
            f"Received: precision={precision!r}"
        )
    autocast = TORCH_AUTOCAST[precision]

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            logits = model(source, target)
            loss = loss_fn(logits.reshape(-1, vocab), target.reshape(-1))
        loss.backward()
        optimizer.step()

    for _ in range(3):  # warm up
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    seconds = time.perf_counter() - start
    record = _record(name, "pytorch", None, steps, seconds, config, batch, length)
    return {
        **record,
        "precision": precision,
        "torch_version": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "pipeline": "fixed",
    }


# The peer's precisions: bfloat16 autocast or none.
TORCH_AUTOCAST = {"float32": False, "mixed_bfloat16": True}


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
    """Runs one setting (`--one`) in this process and returns its line."""
    if setting["framework"] == "pytorch":
        result = run_torch(setting["config"], setting["steps"], setting["precision"])
    else:
        result = run(
            setting["config"],
            setting["steps"],
            setting["jit_compile"],
            setting["loss_chunk_size"],
            setting["precision"],
        )
    peak = matmul_peak_gflops()
    result["matmul_peak_gflops"] = round(peak, 1)  # float32, this process
    result["mfu"] = round(result["model_gflops"] / peak, 3)
    # ru_maxrss is in KiB on Linux.
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result["peak_rss_gb"] = round(peak_rss / 1e9, 2)
    result["peak_rss_gib"] = round(peak_rss / 2**30, 2)
    return result


def measure_in_a_process(setting):
    """`measure(setting)` in a fresh process; a crash is reported as a line
    (`"error"`: the exit status) and the other settings go on."""
    result = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--one", json.dumps(setting)],
        capture_output=True,
        text=True,
    )
    lines = [line for line in result.stdout.splitlines() if line[:1] == "{"]
    if result.returncode == 0 and lines:
        return json.loads(lines[-1])
    return {
        **setting,
        "error": f"exit status {result.returncode}",
        "stderr": result.stderr[-500:],
    }


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
                if precision in TORCH_AUTOCAST:
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
