"""Decoding speed: greedy and beam 4 on a batch of 64 sources, with and
without XLA, for the issue's `small` config and for `base`.

Prints one JSON line per setting: {"config", "backend", "mode", "method",
"batch", "source_length", "output_tokens", "compile_s", "seconds_per_batch",
"sentences_per_s", "tokens_per_s"}. The setting mirrors the issue's peer
measurements: 64 random sources of 32 tokens and exactly 40 output tokens each
(eos is disabled, so every hypothesis runs to the 40-token buffer). Weights
are random: speed does not depend on them. `tokens_per_s` counts the output
tokens of the returned (best) hypotheses, 64 * 40 per batch, for greedy and
beam alike. `seconds_per_batch` is the median of `--repeats` timed runs after
one warm-up (compilation) run.

    python benchmarks/decoding_speed.py --configs small
    python benchmarks/decoding_speed.py --configs base --repeats 1
    KERAS_BACKEND=jax python benchmarks/decoding_speed.py --configs small
    python benchmarks/decoding_speed.py --configs small --processes 5
    python benchmarks/decoding_speed.py --methods beam4 beam4_reordered

With `--processes N` every setting runs in N fresh processes and the median
process's line is printed with every process's `seconds_per_batch`.

Modes: on TensorFlow, `graph` is `tf.function` and `xla` adds
`jit_compile=True`; on JAX, `jit` is `jax.jit` (always XLA).
"""

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# The package's CPU default (keras_transformer/__init__.py), set here because
# keras (and so TensorFlow) is imported first.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

import keras  # noqa: E402
import numpy as np  # noqa: E402
from process_repeats import add_processes_argument, repeat_in_processes  # noqa: E402

from keras_transformer import TransformerConfig, build_transformer  # noqa: E402
from keras_transformer.decoding import compiled_translate  # noqa: E402

CONFIGS = {
    # The issue's `small`: shared vocab 8,000, d_model 256, 4 heads, d_ff 1024,
    # 3 + 3 layers.
    "small": dict(
        source_vocab_size=8000, d_model=256, num_heads=4, d_ff=1024, num_layers=3
    ),
    # The paper's base model with the shared 37,000-token vocabulary of §5.1.
    "base": dict(source_vocab_size=37_000),
}
METHODS = {
    "greedy": dict(method="greedy"),
    "beam4": dict(method="beam", beam_size=4),
    # Beam 4 with one self-attention cache row per beam, gathered when beams
    # are reordered (`translate(share_beam_cache=False)`), for comparison.
    "beam4_reordered": dict(method="beam", beam_size=4, share_beam_cache=False),
}


def run(
    config_name,
    mode,
    method,
    batch,
    source_length,
    output_tokens,
    repeats,
    first_segment=None,
):
    config = TransformerConfig(dropout=0.0, **CONFIGS[config_name])
    keras.utils.set_random_seed(0)
    model = build_transformer(config)
    rng = np.random.default_rng(0)
    source = rng.integers(4, config.source_vocab_size, (batch, source_length))
    source = source.astype("int32")
    fn = compiled_translate(
        model,
        jit_compile=mode != "graph",
        eos_id=-1,  # never produced: every hypothesis has `output_tokens` tokens
        max_length=output_tokens,
        alpha=0.6,
        first_segment=first_segment,
        **METHODS[method],
    )
    start = time.perf_counter()
    np.asarray(fn(source)[0])
    compile_s = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        ids = np.asarray(fn(source)[0])
        times.append(time.perf_counter() - start)
    assert ids.shape[-1] == output_tokens and np.all(ids[:, 0] != 0)
    seconds = statistics.median(times)
    return {
        "config": config_name,
        "backend": keras.backend.backend(),
        "mode": mode,
        "method": method,
        "batch": batch,
        "source_length": source_length,
        "output_tokens": output_tokens,
        "first_segment": first_segment,
        "compile_s": round(compile_s, 2),
        "seconds_per_batch": round(seconds, 3),
        "sentences_per_s": round(batch / seconds, 1),
        "tokens_per_s": round(batch * output_tokens / seconds, 1),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", nargs="+", default=["small"], choices=CONFIGS)
    parser.add_argument(
        "--methods", nargs="+", default=["greedy", "beam4"], choices=METHODS
    )
    default_modes = (
        ["graph", "xla"] if keras.backend.backend() == "tensorflow" else ["jit"]
    )
    parser.add_argument("--modes", nargs="+", default=default_modes)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--source-length", type=int, default=32)
    parser.add_argument("--output-tokens", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--first-segment",
        type=int,
        default=None,
        help="Grow the self-attention cache from this length (`translate`).",
    )
    add_processes_argument(parser)
    args = parser.parse_args()
    if repeat_in_processes(__file__, args.processes, "seconds_per_batch"):
        return
    for config_name in args.configs:
        for mode in args.modes:
            for method in args.methods:
                result = run(
                    config_name,
                    mode,
                    method,
                    args.batch,
                    args.source_length,
                    args.output_tokens,
                    args.repeats,
                    args.first_segment,
                )
                print(json.dumps(result), flush=True)
                keras.backend.clear_session()


if __name__ == "__main__":
    main()
