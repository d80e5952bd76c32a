"""The idle wait at the end of `fit`, and the input pipeline's throughput,
with tf.data's autotuning on (TensorFlow's default) and off (the package's
pipelines, `transforms.without_autotune`), side by side in one run.

    python benchmarks/fit_end_wait.py [--steps 60] [--repeats 2]

For each setting, in this process: (1) `make_dataset` over the bundled
LibreOffice help en-de train split, one full pass, real tokens per second
(source + target); (2) two `fit` calls of a tiny Transformer for `--steps`
updates each, timing from the last step's end (a callback) to `fit`'s return:
the wait of the dataset iterator's destructor. One JSON line per measure.
Run with nothing else on the machine for the throughput figures; the wait is
idle time either way.
"""

import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# The package's oneDNN default, set by its owner before keras (and so
# TensorFlow) is imported.
from keras_transformer.process_defaults import set_onednn_default  # noqa: E402

set_onednn_default()

import keras  # noqa: E402
from pipeline_throughput import (  # noqa: E402
    autotune_options,
    pipeline_tokens_per_second,
)

from keras_transformer import TransformerConfig, build_transformer  # noqa: E402
from pipelines import (  # noqa: E402
    BatchingConfig,
    SentencePieceTokenizer,
    load_bundled,
    make_dataset,
    sample_texts,
)


class LastStepEnd(keras.callbacks.Callback):
    def on_train_batch_end(self, batch, logs=None):
        self.time = time.perf_counter()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    pairs = load_bundled("libreoffice_help", "en-de", "train")
    tokenizer = SentencePieceTokenizer.train(
        sample_texts(pairs, max_pairs=5000), vocab_size=8000
    )
    for repeat in range(args.repeats):
        for enabled in (True, False):
            rate = pipeline_tokens_per_second(
                pairs, tokenizer, BatchingConfig(), 1, autotune_options(enabled)
            )
            line = {"benchmark": "fit_end_wait", "measure": "pipeline"}
            line |= {"autotune": enabled, "repeat": repeat}
            line["tokens_per_second"] = round(rate)
            print(json.dumps(line), flush=True)

            config = BatchingConfig(tokens_per_batch=512)
            dataset = make_dataset(pairs, tokenizer, config)
            dataset = dataset.with_options(autotune_options(enabled))
            model = build_transformer(
                TransformerConfig.from_preset(
                    "base",
                    source_vocab_size=tokenizer.vocab_size,
                    d_model=64,
                    d_ff=128,
                    num_layers=1,
                    num_heads=2,
                )
            )
            model.compile(
                optimizer="adam",
                loss=keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True, ignore_class=0
                ),
            )
            last = LastStepEnd()
            for call in range(2):
                model.fit(
                    dataset.repeat(),
                    steps_per_epoch=args.steps,
                    epochs=1,
                    verbose=0,
                    callbacks=[last],
                )
                line = {"benchmark": "fit_end_wait", "measure": "fit"}
                line |= {"autotune": enabled, "repeat": repeat, "call": call}
                line["steps"] = args.steps
                line["seconds_after_last_step"] = round(
                    time.perf_counter() - last.time, 2
                )
                print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
