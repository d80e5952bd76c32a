"""benchmarks/torch_peer.py, the PyTorch peer of `training_speed.py --peers
torch`: it trains and prints its row in a process that never imports
TensorFlow or Keras (with TensorFlow imported, PyTorch's training ended with
a segmentation fault)."""

import json
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEER = os.path.join(REPO, "benchmarks", "torch_peer.py")

# A tiny model, one timed step, a small matmul: the smallest setting.
TINY = [
    "--config=tiny",
    "--steps=1",
    "--batch=2",
    "--length=4",
    "--num-layers=1",
    "--d-model=8",
    "--num-heads=2",
    "--d-ff=16",
    "--vocab-size=20",
    "--flops-per-target-token=1000.0",
    "--matmul-size=32",
]

# Runs the peer as `python benchmarks/torch_peer.py` does (run_name
# "__main__"), in both precisions, then checks what the process imported.
CHECK = """
import os, runpy, sys
sys.path.insert(0, os.path.dirname(PEER))  # as `python PEER` puts it first
for precision in ("float32", "mixed_bfloat16"):
    sys.argv = [PEER, *TINY, "--precision=" + precision]
    runpy.run_path(PEER, run_name="__main__")
for name in ("tensorflow", "keras", "keras_transformer"):
    assert name not in sys.modules, name + " was imported"
"""

FIELDS = {
    "config",
    "framework",
    "jit_compile",
    "batch",
    "steps",
    "seconds_per_step",
    "target_tokens_per_second",
    "mflop_per_target_token",
    "model_gflops",
    "precision",
    "torch_version",
    "torch_threads",
    "pipeline",
    "matmul_peak_gflops",
    "mfu",
    "peak_rss_gb",
    "peak_rss_gib",
}


def test_peer_trains_without_tensorflow():
    pytest.importorskip("torch")
    code = f"PEER = {PEER!r}\nTINY = {TINY!r}\n{CHECK}"
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [row["precision"] for row in rows] == ["float32", "mixed_bfloat16"]
    for row in rows:
        assert set(row) == FIELDS
        assert row["framework"] == "pytorch"
        assert row["config"] == "tiny"
        assert row["batch"] == "2 x 4+4"
        assert row["steps"] == 1
        assert row["seconds_per_step"] > 0
        assert row["mflop_per_target_token"] == 0.0  # 1000 FLOPs
