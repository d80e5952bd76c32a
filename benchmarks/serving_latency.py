"""Serving latency and throughput of the exported translator (SavedModel),
beside in-process decoding on the same weights.

Exports the issue's `small` config (shared vocabulary of `--vocab-size`
SentencePiece pieces trained on the bundled LibreOffice help en-de corpus;
d_model 256, 4 heads, d_ff 1024, 3 + 3 layers; random weights), or with
`--run-dir` a trained run (its averaged weights, tokenizer and input length,
as `keras-transformer export` writes it), with `export_translator`, loads it
back with `tf.saved_model.load` (tensorflow + tensorflow-text, as any Python
client would) and times the `serving_default` signature (beam 4, alpha 0.6,
source length + `--max-extra-length` output tokens at most) on sentences of
the bundled test split:

- **latency**: `--requests` single-sentence requests, one after the other
  (`p50_ms`, `p95_ms`);
- **throughput**: a batch of `--batch` sentences, the median of `--repeats`
  runs (`batch_seconds`, `sentences_per_s`).

The export's first calls (`warmup_s`: a single sentence and the batch)
are timed apart. The same requests, as the ids the export makes of them,
also go through in-process `compiled_translate` on the same model: in graph
mode, the search the signatures run (`in_process_graph_p50_ms`, `_p95_ms`,
`_batch_seconds`), and with XLA for the batch
(`in_process_xla_batch_seconds`). Every request goes through each path
once, untimed, first (traces, compiles, per-shape kernel set-up); the timed
calls then take turns between the paths, request by request and batch by
batch, so that a change of the machine's speed level hits each path alike.
`batch_ratio` and `p50_ratio` are the
export's figures over graph mode's. In fresh processes it also times the
first single-sentence call after `tf.saved_model.load`, without the export's
warm-up file (`first_call_cold_s`) and after replaying it as TF Serving does
at load (`warmup_replay_s` for its `warmup_records`, then
`first_call_after_replay_s`; `warm_call_s` is the second call, and
`first_call_after_replay_ratio` the first over it; then a second sentence of
another length, first and second time: `other_sentence_first_call_s`,
`other_sentence_warm_call_s`). Prints one JSON line.

With random weights hypotheses seldom end early (eos is 1 of `vocab_size`
pieces): most run to their length limit, which makes these numbers an upper
bound for a trained model of this size (`mean_output_pieces`, best
hypotheses of the batch through the `translate_ids` signature, says how long
the outputs were). In-process: no network, no TF Serving batching.

The export's decoding buffer follows each request: its longest source plus
the extra length, rounded up to a multiple of 16 (`TranslatorModule`);
in-process `translate`'s is the exact sum (the same results: each sentence
stops at its own limit).
`--max-input-length` sets the longest input the export accepts (longer
inputs are truncated). `--compute-dtype bfloat16` exports and decodes the
model in bfloat16, as `keras-transformer export --compute-dtype bfloat16`
does.

    python benchmarks/serving_latency.py
    python benchmarks/serving_latency.py --run-dir keras-transformer-demo
    python benchmarks/serving_latency.py --run-dir keras-transformer-demo \
        --compute-dtype bfloat16
    python benchmarks/serving_latency.py --requests 20 --repeats 1 \
        --max-extra-length 10 --max-input-length 64
"""

import argparse
import json
import os
import statistics
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

from keras_transformer import TransformerConfig, build_transformer  # noqa: E402
from keras_transformer.decoding import (  # noqa: E402
    DecodingConfig,
    compiled_translate,
)
from keras_transformer.process_defaults import tune_memory  # noqa: E402
from keras_transformer.runs.compute_dtypes import COMPUTE_DTYPE_POLICIES  # noqa: E402
from pipelines import (  # noqa: E402
    EOS_ID,
    PAD_ID,
    SentencePieceTokenizer,
    encode_sources,
    load_bundled,
    sample_texts,
)
from savedmodels import export_translator  # noqa: E402

# A program's process-wide choice (the command line makes it too): glibc's
# mmap threshold fixed, so XLA's freed compile buffers leave the process.
tune_memory()

CONFIGS = {
    # The issue's `small` (benchmarks/decoding_speed.py): d_model 256, 4 heads,
    # d_ff 1024, 3 + 3 layers; the vocabulary is the tokenizer's.
    "small": dict(d_model=256, num_heads=4, d_ff=1024, num_layers=3),
}


def test_sentences(count):
    pairs = load_bundled("libreoffice_help", "en-de", "test")
    sources = [s.decode("utf-8") for s, _ in pairs.take(count).as_numpy_iterator()]
    if len(sources) < count:  # repeat a short split
        sources = (sources * (count // max(len(sources), 1) + 1))[:count]
    return sources


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="small", choices=CONFIGS)
    parser.add_argument("--vocab-size", type=int, default=8000)
    # A trained run instead of random weights: its averaged weights (else its
    # newest checkpoint), tokenizer and the export arguments `export` uses.
    parser.add_argument("--run-dir", default=None)
    parser.add_argument("--beam-size", type=int, default=DecodingConfig().beam_size)
    parser.add_argument("--alpha", type=float, default=DecodingConfig().alpha)
    parser.add_argument(
        "--max-extra-length", type=int, default=DecodingConfig().max_extra_length
    )
    # None: the model's max_sequence_length (256), the export's default (with
    # --run-dir: the recipe's training length, as `export` does).
    parser.add_argument("--max-input-length", type=int, default=None)
    parser.add_argument(
        "--compute-dtype", default="float32", choices=sorted(COMPUTE_DTYPE_POLICIES)
    )
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    # Internal: one first-call measurement in a fresh process (see below).
    parser.add_argument("--first-call", nargs=2, metavar=("EXPORT", "REPLAY"))
    args = parser.parse_args()
    if args.first_call:
        return _first_call(*args.first_call)

    decoding = DecodingConfig(
        beam_size=args.beam_size,
        alpha=args.alpha,
        max_extra_length=args.max_extra_length,
    )
    model, tokenizer, max_input_length, weights = export_model(
        args.config,
        args.vocab_size,
        args.run_dir,
        args.compute_dtype,
        args.max_input_length,
    )
    sentences = test_sentences(max(args.requests, args.batch))
    with tempfile.TemporaryDirectory() as base:
        start = time.perf_counter()
        path = export_translator(
            model,
            tokenizer,
            base,
            decoding=decoding,
            max_beam_size=args.beam_size,
            max_input_length=max_input_length,
        )
        export_s = time.perf_counter() - start
        # Each in its own process: a function that one load instantiated
        # could be cached for the next load in the same process.
        cold, warm = (_first_call_process(path, replay) for replay in ("0", "1"))
        start = time.perf_counter()
        loaded = tf.saved_model.load(path)
        serve = loaded.signatures["serving_default"]
        load_s = time.perf_counter() - start

        batch = tf.constant(sentences[: args.batch])
        start = time.perf_counter()
        serve(text=tf.constant(sentences[:1]))
        serve(text=batch)
        warmup_s = time.perf_counter() - start

        # Output lengths (not timed): the same search on ids, made by the
        # export's own text-to-ids path.
        source_ids = encode_sources(
            tokenizer, sentences[: args.batch], max_input_length
        ).to_tensor()
        ids = loaded.signatures["translate_ids"](
            source_ids=source_ids,
            beam_size=tf.constant(args.beam_size),
            alpha=tf.constant(args.alpha),
            max_extra_length=tf.constant(args.max_extra_length),
            n_best=tf.constant(1),
        )["ids"].numpy()[:, 0]

        # In process, on the same weights and the ids the export makes of
        # the same requests: `compiled_translate` in graph mode (the
        # signatures' search) and with XLA (batch only: XLA compiles once per
        # source shape).
        graph_search = compiled_translate(model, decoding, jit_compile=False)
        xla_search = compiled_translate(model, decoding, jit_compile=True)
        requests = [
            (
                tf.constant([s]),
                encode_sources(tokenizer, [s], max_input_length).to_tensor(),
            )
            for s in sentences[: args.requests]
        ]
        calls = {
            "export": lambda text, ids: serve(text=text)["translations"].numpy(),
            "graph": lambda text, ids: graph_search(ids)[0].numpy(),
            "xla": lambda text, ids: xla_search(ids)[0].numpy(),
        }
        # Warm: every request and the batch once through each path, untimed
        # (traces, XLA compiles, and the kernels' per-shape set-up), then
        # timed in turns, request by request and batch by batch, so that a
        # change of the machine's speed level hits every path alike.
        for text, request_ids in requests:
            calls["export"](text, request_ids)
            calls["graph"](text, request_ids)
        for call in calls.values():
            call(batch, source_ids)
        latencies = {"export": [], "graph": []}
        for text, request_ids in requests:
            for name, times in latencies.items():
                start = time.perf_counter()
                calls[name](text, request_ids)
                times.append(time.perf_counter() - start)
        batch_times = {name: [] for name in calls}
        for _ in range(args.repeats):
            for name, call in calls.items():
                start = time.perf_counter()
                call(batch, source_ids)
                batch_times[name].append(time.perf_counter() - start)
    served, graph = (
        _summary(latencies[name], batch_times[name]) for name in ("export", "graph")
    )
    xla_batch_seconds = _summary(None, batch_times["xla"])["batch_seconds"]

    source = source_ids.numpy()
    source_pieces = np.sum((source != PAD_ID) & (source != EOS_ID), axis=-1)
    output_pieces = np.sum((ids != PAD_ID) & (ids != EOS_ID), axis=-1)
    print(
        json.dumps(
            {
                "config": args.config if args.run_dir is None else "trained",
                "weights": weights,
                "compute_dtype": args.compute_dtype,
                "backend": keras.backend.backend(),
                "beam_size": args.beam_size,
                "alpha": args.alpha,
                "max_extra_length": args.max_extra_length,
                "max_input_length": max_input_length,
                "vocab_size": tokenizer.vocab_size,
                "requests": args.requests,
                "p50_ms": served["p50_ms"],
                "p95_ms": served["p95_ms"],
                "batch": args.batch,
                "batch_seconds": served["batch_seconds"],
                "sentences_per_s": round(args.batch / served["batch_seconds"], 1),
                "in_process_graph_p50_ms": graph["p50_ms"],
                "in_process_graph_p95_ms": graph["p95_ms"],
                "in_process_graph_batch_seconds": graph["batch_seconds"],
                "in_process_xla_batch_seconds": xla_batch_seconds,
                "batch_ratio": round(
                    served["batch_seconds"] / graph["batch_seconds"], 3
                ),
                "p50_ratio": round(served["p50_ms"] / graph["p50_ms"], 3),
                "mean_source_pieces": round(float(np.mean(source_pieces)), 1),
                "mean_output_pieces": round(float(np.mean(output_pieces)), 1),
                "export_s": round(export_s, 1),
                "load_s": round(load_s, 1),
                "warmup_s": round(warmup_s, 1),
                "first_call_cold_s": cold["first_call_s"],
                "warmup_replay_s": warm["replay_s"],
                "warmup_records": warm["records"],
                "first_call_after_replay_s": warm["first_call_s"],
                "warm_call_s": warm["second_call_s"],
                "other_sentence_first_call_s": warm["other_sentence_first_s"],
                "other_sentence_warm_call_s": warm["other_sentence_second_s"],
                "first_call_after_replay_ratio": round(
                    warm["first_call_s"] / warm["second_call_s"], 2
                ),
                "tensorflow": tf.__version__,
                "cpus": os.cpu_count(),
            }
        ),
        flush=True,
    )


def export_model(
    config="small",
    vocab_size=8000,
    run_dir=None,
    compute_dtype="float32",
    max_input_length=None,
):
    """`(model, tokenizer, max_input_length, weights)`: `config` with random
    weights and a tokenizer of `vocab_size` pieces trained here, or a run's
    trained model (`run_dir`) with the export's input length."""
    if run_dir is not None:
        from keras_transformer.runs import load_run
        from keras_transformer.translation import translator_arguments

        loaded = load_run(run_dir, compute_dtype=compute_dtype)
        max_input_length = (
            max_input_length
            or (translator_arguments(loaded.recipe)["max_input_length"])
        )
        return loaded.model, loaded.tokenizer, max_input_length, loaded.weights
    keras.utils.set_random_seed(0)  # before the tokenizer (tensorflow-text quirk)
    pairs = load_bundled("libreoffice_help", "en-de", "train")
    tokenizer = SentencePieceTokenizer.train(
        sample_texts(pairs, max_pairs=5000), vocab_size=vocab_size
    )
    model_config = TransformerConfig(
        dropout=0.0, source_vocab_size=tokenizer.vocab_size, **CONFIGS[config]
    )
    model = build_transformer(model_config, dtype=compute_dtype)
    max_input_length = max_input_length or model.max_sequence_length
    return model, tokenizer, max_input_length, "random"


def _summary(latencies, batch_times):
    """p50 and p95 of `latencies` in ms (`None` without them) and the median
    of `batch_times` in seconds."""

    def percentile(q):
        if not latencies:
            return None
        return round(1000 * float(np.percentile(latencies, q)), 1)

    return {
        "p50_ms": percentile(50),
        "p95_ms": percentile(95),
        "batch_seconds": round(statistics.median(batch_times), 3),
    }


def _first_call_process(path, replay):
    """`_first_call` in a fresh Python process; its JSON line as a dict."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, __file__, "--first-call", path, replay],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def _first_call(path, replay):
    """Loads the export, replays its warm-up file if `replay == "1"` (what
    TF Serving does while it loads a version), then times the first and the
    second single-sentence `serving_default` call; prints a JSON line."""
    import tensorflow_text  # noqa: F401  (the SavedModel's tokenizer ops)

    from savedmodels.warmup import replay_warmup

    loaded = tf.saved_model.load(path)
    start = time.perf_counter()
    records = replay_warmup(loaded, path) if replay == "1" else 0
    replay_s = time.perf_counter() - start
    first, other = test_sentences(2)
    calls = []
    for sentence in (first, first, other, other):
        text = tf.constant([sentence])
        start = time.perf_counter()
        loaded.signatures["serving_default"](text=text)["translations"].numpy()
        calls.append(time.perf_counter() - start)
    print(
        json.dumps(
            {
                "records": records,
                "replay_s": round(replay_s, 2),
                "first_call_s": round(calls[0], 3),
                "second_call_s": round(calls[1], 3),
                "other_sentence_first_s": round(calls[2], 3),
                "other_sentence_second_s": round(calls[3], 3),
            }
        )
    )


if __name__ == "__main__":
    main()
