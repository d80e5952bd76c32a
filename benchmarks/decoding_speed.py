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
`jit_compile=True`; on JAX, `jit` is `jax.jit` (always XLA). `ct2` and
`ct2_int8` run the fastest peer of the decoding issue, CTranslate2 (C++;
`pip install ".[peers]"`), on a model of the same shapes (post-norm, sinusoidal
positions, shared embeddings, random weights) with the same sources, beam size
and exactly `--output-tokens` tokens (`min_decoding_length` =
`max_decoding_length`), on 2 intra-op threads: the same machine level as ours
when both run in one process, which a comparison across runs is not.

    python benchmarks/decoding_speed.py --modes xla ct2 ct2_int8 --processes 5

`graph_int8` and `xla_int8` run our model after Keras' `model.quantize("int8")`
(int8 kernels of every Dense and EinsumDense layer; the tied embedding stays
float32), in graph mode and with XLA:

    python benchmarks/decoding_speed.py --modes graph graph_int8 ct2_int8

`graph_bf16` and `xla_bf16` run the model built with Keras' `bfloat16` policy
(bfloat16 weights, compute and caches): what `--compute-dtype bfloat16` gives
`translate`, `evaluate` and `export`:

    python benchmarks/decoding_speed.py --modes graph xla_bf16 ct2_int8 --processes 5

Every line also has `matmul_peak_gflops`, the process's fp32 matmul peak
(`training_speed.matmul_peak_gflops`), on TensorFlow.
"""

import argparse
import json
import os
import statistics
import tempfile
import time
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# The package's oneDNN default, set by its owner before keras (and so
# TensorFlow) is imported.
from keras_transformer.process_defaults import set_onednn_default  # noqa: E402

set_onednn_default()

import keras  # noqa: E402
import numpy as np  # noqa: E402
from process_repeats import add_processes_argument, repeat_in_processes  # noqa: E402
from training_speed import matmul_peak_gflops  # noqa: E402

from keras_transformer import TransformerConfig, build_transformer  # noqa: E402
from keras_transformer.decoding import (  # noqa: E402
    DecodingConfig,
    compiled_translate,
)
from keras_transformer.process_defaults import tune_memory  # noqa: E402

# A program's process-wide choice (the command line makes it too).
tune_memory()

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
    "greedy": DecodingConfig(method="greedy"),
    "beam4": DecodingConfig(method="beam", beam_size=4),
    # Beam 4 with one self-attention cache row per beam, gathered when beams
    # are reordered (`DecodingConfig(share_beam_cache=False)`), for comparison.
    "beam4_reordered": DecodingConfig(
        method="beam", beam_size=4, share_beam_cache=False
    ),
}


def run_ctranslate2(config, source, beam_size, output_tokens, repeats, quantization):
    """Seconds of CTranslate2's `translate_batch` (median of `repeats` after a
    warm-up) on a random-weight model with `config`'s shapes."""
    import ctranslate2  # noqa: PLC0415 (optional: the `peers` extra)
    from ctranslate2 import specs  # noqa: PLC0415

    d, f = config.d_model, config.d_ff
    rng = np.random.default_rng(0)

    def linear(spec, outputs, inputs):
        spec.weight = (rng.standard_normal((outputs, inputs)) / inputs**0.5).astype(
            "float32"
        )
        spec.bias = np.zeros(outputs, "float32")

    def layer_norm(spec):
        spec.gamma, spec.beta = np.ones(d, "float32"), np.zeros(d, "float32")

    spec = specs.TransformerSpec.from_config(
        (config.num_layers, config.num_layers), config.num_heads, pre_norm=False
    )
    vocab_size = config.source_vocab_size
    embedding = (rng.standard_normal((vocab_size, d)) * d**-0.5).astype("float32")
    spec.encoder.embeddings[0].weight = embedding
    spec.decoder.embeddings.weight = embedding
    spec.decoder.projection.weight = embedding
    spec.decoder.projection.bias = np.zeros(vocab_size, "float32")
    for stack in (spec.encoder, spec.decoder):
        for layer in stack.layer:
            layer_norm(layer.self_attention.layer_norm)
            linear(layer.self_attention.linear[0], 3 * d, d)  # fused Q, K, V
            linear(layer.self_attention.linear[1], d, d)
            if stack is spec.decoder:
                layer_norm(layer.attention.layer_norm)
                linear(layer.attention.linear[0], d, d)
                linear(layer.attention.linear[1], 2 * d, d)  # fused K, V
                linear(layer.attention.linear[2], d, d)
            layer_norm(layer.ffn.layer_norm)
            linear(layer.ffn.linear_0, f, d)
            linear(layer.ffn.linear_1, d, f)
    vocabulary = ["<blank>", "<s>", "</s>"] + [f"t{i}" for i in range(3, vocab_size)]
    spec.register_source_vocabulary(vocabulary)
    spec.register_target_vocabulary(vocabulary)
    spec.validate()
    spec.optimize(quantization=quantization)
    with tempfile.TemporaryDirectory() as directory:
        spec.save(directory)
        translator = ctranslate2.Translator(
            directory, device="cpu", inter_threads=1, intra_threads=2
        )
    tokens = [[vocabulary[i] for i in row] for row in source]
    options = dict(
        beam_size=beam_size,
        max_decoding_length=output_tokens,
        min_decoding_length=output_tokens,
        max_batch_size=len(tokens),
    )
    start = time.perf_counter()
    translator.translate_batch(tokens, **options)
    compile_s = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        results = translator.translate_batch(tokens, **options)
        times.append(time.perf_counter() - start)
    lengths = {len(result.hypotheses[0]) for result in results}
    assert lengths == {output_tokens}, lengths
    return compile_s, statistics.median(times)


def run_ours(config, source, mode, method, output_tokens, repeats):
    """Seconds (first call, then median of `repeats`) of `compiled_translate`."""
    keras.utils.set_random_seed(0)
    # bfloat16 modes: Keras' `bfloat16` policy, bfloat16 variables (random
    # weights of the same distribution; speed does not depend on them)
    model = build_transformer(
        config, dtype="bfloat16" if mode.endswith("_bf16") else None
    )
    if mode.endswith("_int8"):
        # Keras' int8 weights: Dense and EinsumDense kernels in int8 with
        # per-channel scales, their inputs quantized on the fly. The tied
        # embedding stays float32 (Keras quantizes `ReversibleEmbedding`
        # itself, not subclasses; see benchmarks/precision_quality.py).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Layer X does not have ..."
            model.quantize("int8")
    fn = compiled_translate(
        model,
        METHODS[method],  # the paper's alpha 0.6 for beam search
        jit_compile=mode.split("_")[0] != "graph",
        eos_id=-1,  # never produced: every hypothesis has `output_tokens` tokens
        max_length=output_tokens,
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
    return compile_s, statistics.median(times)


def run(
    config_name,
    mode,
    method,
    batch,
    source_length,
    output_tokens,
    repeats,
):
    """One setting's JSON record, or `None` for a method a peer does not have."""
    config = TransformerConfig(dropout=0.0, **CONFIGS[config_name])
    rng = np.random.default_rng(0)
    source = rng.integers(4, config.source_vocab_size, (batch, source_length))
    source = source.astype("int32")
    if mode in ("ct2", "ct2_int8"):
        if method not in ("greedy", "beam4"):
            return None
        backend = "ctranslate2"
        compile_s, seconds = run_ctranslate2(
            config,
            source,
            METHODS[method].num_hypotheses,
            output_tokens,
            repeats,
            "int8" if mode == "ct2_int8" else None,
        )
    else:
        backend = keras.backend.backend()
        compile_s, seconds = run_ours(
            config, source, mode, method, output_tokens, repeats
        )
    return {
        "config": config_name,
        "backend": backend,
        "mode": mode,
        "method": method,
        "batch": batch,
        "source_length": source_length,
        "output_tokens": output_tokens,
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
    add_processes_argument(parser)
    args = parser.parse_args()
    if repeat_in_processes(__file__, args.processes, "seconds_per_batch"):
        return
    peak = matmul_peak_gflops() if keras.backend.backend() == "tensorflow" else None
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
                )
                if result is None:
                    continue
                if peak is not None:
                    result["matmul_peak_gflops"] = round(peak, 1)
                print(json.dumps(result), flush=True)
                keras.backend.clear_session()


if __name__ == "__main__":
    main()
