"""Parameter counts of every preset beside the paper's Table 3 column.

Prints one JSON line per preset: {"preset", "params", "params_millions",
"paper_millions"}. The vocabulary is the shared 37,000-token BPE of §5.1.

    python benchmarks/parameter_counts.py
"""

import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# The package's oneDNN default, set by its owner before keras (and so
# TensorFlow) is imported.
from keras_transformer.process_defaults import set_onednn_default  # noqa: E402

set_onednn_default()

import keras  # noqa: E402

from keras_transformer import TransformerConfig, build_transformer  # noqa: E402
from keras_transformer.presets import PRESETS  # noqa: E402


def main():
    for name, preset in PRESETS.items():
        overrides = {}
        if not name.startswith("parsing"):
            overrides["source_vocab_size"] = 37_000
        config = TransformerConfig.from_preset(name, **overrides)
        count = build_transformer(config).count_params()
        print(
            json.dumps(
                {
                    "preset": name,
                    "vocab": config.source_vocab_size,
                    "params": count,
                    "params_millions": round(count / 1e6, 1),
                    "paper_millions": preset["params"],
                }
            ),
            flush=True,
        )
        keras.backend.clear_session()


if __name__ == "__main__":
    main()
