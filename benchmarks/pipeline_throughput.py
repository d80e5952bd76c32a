"""Input pipeline throughput against the training step's consumption.

Measures (1) `make_dataset` from raw strings, tokenization in the graph, no
cache, over the bundled LibreOffice help en-de train split (real tokens per
second, source + target), and (2) a base Transformer's training step on
batches from the same pipeline (real tokens consumed per second), on this
machine. Prints one JSON line with both and their ratio; the pipeline must be
at least 10x faster than the step so it never starves training.

    python benchmarks/pipeline_throughput.py [--step-tokens 2000] [--steps 3]
    python benchmarks/pipeline_throughput.py --autotune on off

`--autotune on off` measures the pipeline twice in the same process, with
tf.data's autotuning on (TensorFlow's default, which made `fit` wait at its
end) and off (the package's `transforms.without_autotune`), one line each
against the same training step: before and after, in one run.

The step uses a smaller token budget than §5.1's 25,000 so that a CPU step
takes seconds; tokens/s of a saturated step hardly depends on the batch size.
"""

import argparse
import dataclasses
import json
import os
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
from pipelines import (  # noqa: E402
    BatchingConfig,
    SentencePieceTokenizer,
    load_bundled,
    make_dataset,
    sample_texts,
)


def real_tokens(inputs, target_out):
    return int(np.count_nonzero(inputs["source_ids"]) + np.count_nonzero(target_out))


def autotune_options(enabled):
    """`tf.data.Options` with autotuning `enabled` (the package's is off)."""
    options = tf.data.Options()
    options.autotune.enabled = enabled
    return options


def pipeline_tokens_per_second(pairs, tokenizer, config, epochs=2, options=None):
    """Real tokens per second of `make_dataset` over `epochs` passes, with
    `options` (a `tf.data.Options`) over the package's when given."""
    dataset = make_dataset(pairs, tokenizer, config)
    if options is not None:
        dataset = dataset.with_options(options)
    tokens, start = 0, time.perf_counter()
    for _ in range(epochs):
        for inputs, target_out in dataset.as_numpy_iterator():
            tokens += real_tokens(inputs, target_out)
    return tokens / (time.perf_counter() - start)


def step_tokens_per_second(pairs, tokenizer, config, preset, steps):
    model_config = TransformerConfig.from_preset(
        preset, source_vocab_size=tokenizer.vocab_size
    )
    model = build_transformer(model_config)
    model.compile(
        optimizer="adam",
        loss=keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, ignore_class=0
        ),
    )
    batches = list(make_dataset(pairs, tokenizer, config).take(steps + 1))
    model.train_on_batch(*batches[0])  # trace and compile
    tokens, start = 0, time.perf_counter()
    for inputs, target_out in batches[1:]:
        model.train_on_batch(inputs, target_out)
        tokens += real_tokens(
            {"source_ids": inputs["source_ids"].numpy()}, target_out.numpy()
        )
    return tokens / (time.perf_counter() - start), model.count_params()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default="base")
    parser.add_argument("--step-tokens", type=int, default=2000)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument(
        "--autotune",
        nargs="*",
        choices=["on", "off"],
        default=[],
        help="Measure the pipeline with tf.data autotuning forced on / off "
        "(one line each); default: the package's pipeline as it is.",
    )
    args = parser.parse_args()

    pairs = load_bundled("libreoffice_help", "en-de", "train")
    tokenizer = SentencePieceTokenizer.train(
        sample_texts(pairs, max_pairs=5000), vocab_size=8000
    )
    config = BatchingConfig()
    settings = args.autotune or [None]
    pipelines_rates = {
        setting: pipeline_tokens_per_second(
            pairs,
            tokenizer,
            config,
            options=None if setting is None else autotune_options(setting == "on"),
        )
        for setting in settings
    }
    step_config = dataclasses.replace(config, tokens_per_batch=args.step_tokens)
    step, params = step_tokens_per_second(
        pairs, tokenizer, step_config, args.preset, args.steps
    )
    for setting, pipeline in pipelines_rates.items():
        line = {"benchmark": "pipeline_throughput", "cpus": os.cpu_count()}
        if setting is not None:
            line["autotune"] = setting
        line |= {
            "pipeline_tokens_per_s": round(pipeline),
            "train_step_tokens_per_s": round(step),
            "ratio": round(pipeline / step, 1),
            "preset": args.preset,
            "params": params,
            "step_tokens_per_batch": args.step_tokens,
            "vocab_size": tokenizer.vocab_size,
        }
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
