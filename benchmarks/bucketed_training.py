"""`training_speed.py --real`: the `small` model trained as `train` trains it.

One process per setting (`python benchmarks/bucketed_training.py PATH
RUN_DIR STEPS [BUCKET_SCALE [PRECISION [MIN_BUCKET_LENGTH]]]`, PATH one of
`graph`, `xla`, PRECISION a training precision, float32 by default): the
library's `train` (`keras_transformer.runs.train`) on the `demo` recipe with
`small`'s model (vocab 8,000, d_model 256, 4 heads, d_ff 1024, 3+3 layers,
post-norm, dropout 0.1) and 2,048-token batches (its 64 x 32 tokens), on the
bundled LibreOffice help corpus. The run is prepared (tokenizer, token
cache), bucketed (the demo recipe's buckets, or lengths growing by
BUCKET_SCALE from MIN_BUCKET_LENGTH) and trained through `fit_resumable`,
exactly as `keras-transformer train` does. A fresh process per setting,
because TensorFlow reads the XLA cache flag once per process.

It prints one JSON line, `"pipeline": "bucketed"`:
- `target_tokens_per_second`: real target tokens over the steady state, the
  steps that took at most 3x the median step (a step that traced or compiled
  a new shape takes several seconds);
- `compile_seconds`: the wall time of the other steps, `slow_steps` their
  number, `xla_compilations` the executables XLA added to the run's cache;
- `fit_end_wait_seconds`: from the end of training to `train`'s return (the
  idle wait at the end of `fit`, BUILD_NOTES.md, "tf.data autotuning is off");
- `padding_efficiency`: real tokens / padded positions (both sides) of one
  epoch of the run's batches, and `shapes` its distinct batch shapes.
A run directory whose `xla_cache` holds executables (copied from an earlier
run) measures what the persistent cache saves.
"""

import json
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# The package's oneDNN default, set by its owner before keras (and so
# TensorFlow) is imported.
from keras_transformer.process_defaults import set_onednn_default  # noqa: E402

set_onednn_default()

import keras  # noqa: E402
import numpy as np  # noqa: E402

import pipelines  # noqa: E402
from keras_transformer.process_defaults import tune_memory  # noqa: E402
from keras_transformer.recipes import get_recipe  # noqa: E402
from keras_transformer.runs.batching_plan import batching_plan  # noqa: E402
from keras_transformer.runs.run_directory import RunDirectory  # noqa: E402
from keras_transformer.runs.train import train  # noqa: E402
from keras_transformer.runs.training_cache import read_cache  # noqa: E402
from keras_transformer.training.xla_compilation import (  # noqa: E402
    cached_executables,
)

# `small` of training_speed.py, on the demo recipe's data and buckets.
SMALL_RECIPE = {
    "vocab_size": 8000,
    "model.num_layers": 3,
    "model.d_model": 256,
    "model.d_ff": 1024,
    "model.num_heads": 4,
    "model.dropout": 0.1,
    "model.normalize_first": False,
    "tokens_per_batch": 2048,
    "max_tokens_per_replica": 2048,
    "train_minutes": None,
    "checkpoint_every_minutes": None,
    "checkpoint_every_steps": 1_000_000,
    "steps_per_epoch": 50,
    "warmup_steps": 4000,
}


class StepLog(keras.callbacks.Callback):
    """Each step's wall time, real and padded token counts, and shape."""

    def __init__(self):
        super().__init__()
        self.steps = []
        self.train_end = None

    def on_train_batch_begin(self, batch, logs=None):
        self._begin = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        seconds = time.perf_counter() - self._begin
        tokens = float(logs["target_tokens"])  # since the epoch began
        previous = self.steps[-1]["cumulative"] if batch else 0.0
        self.steps.append(
            {"seconds": seconds, "tokens": tokens - previous, "cumulative": tokens}
        )

    def on_train_end(self, logs=None):
        self.train_end = time.perf_counter()


def epoch_padding(run_dir, recipe, static):
    """Real tokens / padded positions of the training stream's first epoch's
    worth of batches (as many as one pass makes), and its distinct shapes."""
    config, _ = batching_plan(recipe, static=static)
    tokenized = read_cache(RunDirectory(run_dir))
    one_pass = pipelines.batch_tokenized(tokenized, config, training=False)
    batches = sum(1 for _ in one_pass)
    dataset = pipelines.batch_tokenized(tokenized, config).take(batches)
    real = padded = 0
    shapes = set()
    for inputs, target_out in dataset.as_numpy_iterator():
        source = inputs["source_ids"]
        real += np.count_nonzero(source) + np.count_nonzero(target_out)
        padded += source.size + target_out.size
        shapes.add(source.shape + target_out.shape[1:])
    return round(real / padded, 4), len(shapes)


def main():
    path, run_dir, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    demo = get_recipe("demo")
    scale = float(sys.argv[4]) if len(sys.argv) > 4 else demo.bucket_scale
    precision = sys.argv[5] if len(sys.argv) > 5 else "float32"
    min_length = int(sys.argv[6]) if len(sys.argv) > 6 else demo.min_bucket_length
    tune_memory()  # what the command line does
    recipe = demo.with_overrides(
        {
            **SMALL_RECIPE,
            "train_steps": steps,
            "bucket_scale": scale,
            "min_bucket_length": min_length,
            "precision": precision,
        }
    )
    cache_dir = os.path.join(run_dir, "xla_cache")
    cached_before = cached_executables(cache_dir)
    log = StepLog()
    result = train(
        recipe, run_dir, verbose=0, jit_compile=path == "xla", callbacks=[log]
    )
    returned = time.perf_counter()
    efficiency, shapes = epoch_padding(run_dir, recipe, static=path == "xla")
    times = [step["seconds"] for step in log.steps]
    median = statistics.median(times)
    steady = [step for step in log.steps if step["seconds"] <= 3 * median]
    slow = [step for step in log.steps if step["seconds"] > 3 * median]
    steady_seconds = sum(step["seconds"] for step in steady)
    print(
        json.dumps(
            {
                "config": "small",
                "framework": "keras",
                "pipeline": "bucketed",
                "jit_compile": path == "xla",
                "precision": precision,
                "recipe": "demo + small model, 2,048 tokens per batch",
                "bucket_scale": scale,
                "min_bucket_length": min_length,
                "steps": result["steps"],
                "steady_steps": len(steady),
                "seconds_per_step": round(steady_seconds / len(steady), 4),
                "target_tokens_per_second": round(
                    sum(step["tokens"] for step in steady) / steady_seconds, 1
                ),
                "compile_seconds": round(sum(step["seconds"] for step in slow), 1),
                "slow_steps": len(slow),
                "xla_compilations": cached_executables(cache_dir) - cached_before,
                "xla_cached_before": cached_before,
                "fit_end_wait_seconds": round(returned - log.train_end, 3),
                "wall_seconds_per_step_all": round(sum(times) / len(times), 4),
                "padding_efficiency": efficiency,
                "shapes": shapes,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
