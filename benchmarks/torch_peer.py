"""PyTorch's `nn.Transformer` trained on fixed-shape random batches: the peer
of `training_speed.py --peers torch`, in a process of its own.

Never imports TensorFlow, Keras or this package, directly or through what it
imports (numpy and torch only): a PyTorch that trained in a process where
TensorFlow had been imported ended with a segmentation fault (exit status
-11; the torch 2.14.1 that `pip install torch` brings and 2.13.0+cpu, on
Intel Sapphire Rapids, in bfloat16 autocast). So every shape comes over the
command line; `training_speed.py` passes its presets' numbers and the model
FLOPs per target token of its `model_flops_per_target_token`:

    python benchmarks/torch_peer.py --config small --steps 20 \
        --precision mixed_bfloat16 --batch 64 --length 32 --num-layers 3 \
        --d-model 256 --num-heads 4 --d-ff 1024 --vocab-size 8000 \
        --dropout 0.1 --flops-per-target-token 46055424

Prints one JSON line, in `training_speed.py`'s fields for a PyTorch row:
{"config", "framework": "pytorch", "jit_compile": null, "batch", "steps",
"seconds_per_step", "target_tokens_per_second", "mflop_per_target_token",
"model_gflops", "precision", "torch_version", "torch_threads", "pipeline":
"fixed", "matmul_peak_gflops", "mfu", "peak_rss_gb", "peak_rss_gib"}.
`matmul_peak_gflops` is this process's float32 square matmul (PyTorch's, on
the peer's threads), `peak_rss_gb` (10^9 bytes) and `peak_rss_gib` (2^30
bytes) this process's peak resident memory.

The model: post-norm, sinusoidal positions, one embedding shared by source,
target and the output projection, label-smoothed (0.1) cross-entropy
ignoring padding, Adam(0.9, 0.98, 1e-9), `--dropout`, 2 threads; random
tokens in [4, vocab). In `mixed_bfloat16` the forward pass and the loss run
under `torch.autocast("cpu", dtype=torch.bfloat16)` (float32 parameters, as
Keras' policy). Needs `torch` (`pip install torch==2.13.0` takes a CPU build
here; the line's `torch_version` names the build measured).
"""

import argparse
import json
import time

import numpy as np
from throughput_record import throughput_record, with_peak_and_memory

# The peer's precisions: bfloat16 autocast or none.
TORCH_AUTOCAST = {"float32": False, "mixed_bfloat16": True}


def matmul_peak_gflops(size=2048, repeats=10):
    """fp32 GFLOP/s of a square matmul in this process (best of `repeats`)."""
    import torch  # noqa: PLC0415 (optional peer)

    generator = torch.Generator().manual_seed(0)
    a = torch.randn((size, size), generator=generator)
    b = torch.randn((size, size), generator=generator)
    torch.matmul(a, b)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        torch.matmul(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best / 1e9


def run_torch(args):
    """Trains `args.steps` timed steps (after 3 warm-up steps) and returns the
    row without the matmul peak and memory fields (`measure` adds them)."""
    import torch  # noqa: PLC0415 (optional peer)
    from torch import nn  # noqa: PLC0415

    if args.precision not in TORCH_AUTOCAST:
        raise ValueError(
            f"The PyTorch peer runs {sorted(TORCH_AUTOCAST)}. "
            f"Received: precision={args.precision!r}"
        )
    autocast = TORCH_AUTOCAST[args.precision]
    batch, length = args.batch, args.length
    d, vocab = args.d_model, args.vocab_size
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
                args.num_heads,
                args.num_layers,
                args.num_layers,
                args.d_ff,
                dropout=args.dropout,
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
    for _ in range(args.steps):
        step()
    seconds = time.perf_counter() - start
    row = throughput_record(
        args.config,
        "pytorch",
        None,
        args.steps,
        seconds,
        batch,
        length,
        args.flops_per_target_token,
    )
    return {
        **row,
        "precision": args.precision,
        "torch_version": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "pipeline": "fixed",
    }


def measure(args):
    """The setting's row with this process's matmul peak, MFU and memory."""
    result = run_torch(args)
    return with_peak_and_memory(result, matmul_peak_gflops(args.matmul_size))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="custom", help="The row's name.")
    parser.add_argument("--steps", type=int, default=10, help="Timed steps.")
    parser.add_argument(
        "--precision", default="float32", choices=sorted(TORCH_AUTOCAST)
    )
    parser.add_argument("--batch", type=int, required=True, help="Pairs a batch.")
    parser.add_argument(
        "--length", type=int, required=True, help="Tokens a side (source, target)."
    )
    parser.add_argument(
        "--num-layers", type=int, required=True, help="Encoder and decoder each."
    )
    parser.add_argument("--d-model", type=int, required=True)
    parser.add_argument("--num-heads", type=int, required=True)
    parser.add_argument("--d-ff", type=int, required=True)
    parser.add_argument(
        "--vocab-size", type=int, required=True, help="The shared vocabulary."
    )
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument(
        "--flops-per-target-token",
        type=float,
        required=True,
        help="Training FLOPs per target token "
        "(training_speed.model_flops_per_target_token).",
    )
    parser.add_argument(
        "--matmul-size",
        type=int,
        default=2048,
        help="Side of the square matmul of `matmul_peak_gflops`. Default: 2048.",
    )
    return parser.parse_args(argv)


def main(argv=None):
    print(json.dumps(measure(parse_args(argv))), flush=True)


if __name__ == "__main__":
    main()
