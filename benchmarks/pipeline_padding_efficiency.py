"""Padding efficiency of the bucketed batches on the bundled corpus.

Trains a shared SentencePiece BPE (8,000 pieces; the bundled corpus is ~1% of
WMT En-De, too small for §5.1's 37,000) on the LibreOffice help en-de train
split, runs one epoch of `make_dataset` at the default `BatchingConfig`
(25,000 tokens per side; source and target each bucketed on 8 x1.1 .. 256, a
batch per bucket pair) and prints one JSON line per mode (dynamic, static):
real tokens / padded positions for the source, the target and both (the
requirement: at least 0.90 overall in the default, dynamic mode), plus batch,
pair and filter counts. `batch_fill` is padded positions / (batches x budget),
both sides: how full batches are on average, partial batches included. In
static mode partial batches are filled with empty rows, so every pair is
kept: `pairs` counts the real (non-empty) rows.

    python benchmarks/pipeline_padding_efficiency.py
"""

import dataclasses
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

from pipelines import (  # noqa: E402
    BatchingConfig,
    SentencePieceTokenizer,
    count_filtered,
    load_bundled,
    make_dataset,
    sample_texts,
)


def efficiency(dataset, tokens_per_batch):
    real = {"source": 0, "target": 0}
    padded = {"source": 0, "target": 0}
    batches = pairs = 0
    max_tokens = 0
    for inputs, target_out in dataset.as_numpy_iterator():
        batches += 1
        pairs += int(np.count_nonzero(target_out.any(axis=1)))  # not empty rows
        for side, ids in (("source", inputs["source_ids"]), ("target", target_out)):
            real[side] += int(np.count_nonzero(ids))
            padded[side] += ids.size
            max_tokens = max(max_tokens, ids.size)
    return {
        "source_efficiency": round(real["source"] / padded["source"], 4),
        "target_efficiency": round(real["target"] / padded["target"], 4),
        "efficiency": round(sum(real.values()) / sum(padded.values()), 4),
        "real_tokens": sum(real.values()),
        "padded_tokens": sum(padded.values()),
        "batches": batches,
        "pairs": pairs,
        "batch_fill": round(sum(padded.values()) / (2 * batches * tokens_per_batch), 4),
        "max_padded_tokens_per_side": max_tokens,
    }


def main():
    pairs = load_bundled("libreoffice_help", "en-de", "train")
    start = time.perf_counter()
    tokenizer = SentencePieceTokenizer.train(sample_texts(pairs), vocab_size=8000)
    train_seconds = time.perf_counter() - start
    config = BatchingConfig()
    report = count_filtered(pairs, tokenizer, config)
    for static in (False, True):
        mode = dataclasses.replace(config, static_shapes=static)
        record = {
            "benchmark": "pipeline_padding_efficiency",
            "corpus": "libreoffice_help en-de train",
            "vocab_size": tokenizer.vocab_size,
            "tokenizer_train_s": round(train_seconds, 1),
            "static_shapes": static,
            "tokens_per_batch": mode.tokens_per_batch,
            "buckets_per_side": len(mode.bucket_lengths),
            "filter_report": str(report),
        }
        dataset = make_dataset(pairs, tokenizer, mode)
        record.update(efficiency(dataset, mode.tokens_per_batch))
        print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
