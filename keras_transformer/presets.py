"""Named hyperparameter sets of the paper: base, big, Table 3 rows, parsing.

Each preset has two parts, each read by its one owner:

- `model`: overrides of the `TransformerConfig` defaults (the base model), read
  by `TransformerConfig.from_preset`;
- `training`: the training values of its Table 3 row (`train_steps`,
  `label_smoothing`), read by the recipes (`Recipe.total_train_steps`,
  `Recipe.effective_label_smoothing`) through `training_values`.

Table 3: "Unlisted values are identical to those of the base model."
The `params` entry is the paper's parameter count in millions (Table 3's last
column), kept for the comparison in BUILD_NOTES.md; `None` where the paper
leaves the cell empty.
"""

PRESETS = {
    "base": {
        "description": "Transformer (base model), Table 3 first row.",
        "model": {},
        # §5.2 "100,000 steps" and §5.4 eps_ls = 0.1; other presets inherit
        # these unless their "training" entry says otherwise.
        "training": {"train_steps": 100_000, "label_smoothing": 0.1},
        "params": 65,
    },
    "big": {
        "description": "Transformer (big), Table 3 last row; §6.1 En-De.",
        "model": {
            "d_model": 1024,
            "d_ff": 4096,
            "num_heads": 16,
            "dropout": 0.3,
        },
        "training": {"train_steps": 300_000},
        "params": 213,
    },
    # (A) attention heads and key/value sizes at constant computation.
    "table3_A1": {
        "description": "Table 3 (A): h=1, d_k=d_v=512.",
        "model": {"num_heads": 1, "d_k": 512, "d_v": 512},
        "params": None,
    },
    "table3_A2": {
        "description": "Table 3 (A): h=4, d_k=d_v=128.",
        "model": {"num_heads": 4, "d_k": 128, "d_v": 128},
        "params": None,
    },
    "table3_A3": {
        "description": "Table 3 (A): h=16, d_k=d_v=32.",
        "model": {"num_heads": 16, "d_k": 32, "d_v": 32},
        "params": None,
    },
    "table3_A4": {
        "description": "Table 3 (A): h=32, d_k=d_v=16.",
        "model": {"num_heads": 32, "d_k": 16, "d_v": 16},
        "params": None,
    },
    # (B) smaller attention keys.
    "table3_B1": {
        "description": "Table 3 (B): d_k=16.",
        "model": {"d_k": 16},
        "params": 58,
    },
    "table3_B2": {
        "description": "Table 3 (B): d_k=32.",
        "model": {"d_k": 32},
        "params": 60,
    },
    # (C) model size.
    "table3_C1": {
        "description": "Table 3 (C): N=2.",
        "model": {"num_layers": 2},
        "params": 36,
    },
    "table3_C2": {
        "description": "Table 3 (C): N=4.",
        "model": {"num_layers": 4},
        "params": 50,
    },
    "table3_C3": {
        "description": "Table 3 (C): N=8.",
        "model": {"num_layers": 8},
        "params": 80,
    },
    "table3_C4": {
        "description": "Table 3 (C): d_model=256, d_k=d_v=32.",
        "model": {"d_model": 256, "d_k": 32, "d_v": 32},
        "params": 28,
    },
    "table3_C5": {
        "description": "Table 3 (C): d_model=1024, d_k=d_v=128.",
        "model": {"d_model": 1024, "d_k": 128, "d_v": 128},
        "params": 168,
    },
    "table3_C6": {
        "description": "Table 3 (C): d_ff=1024.",
        "model": {"d_ff": 1024},
        "params": 53,
    },
    "table3_C7": {
        "description": "Table 3 (C): d_ff=4096.",
        "model": {"d_ff": 4096},
        "params": 90,
    },
    # (D) regularisation.
    "table3_D1": {
        "description": "Table 3 (D): P_drop=0.0.",
        "model": {"dropout": 0.0},
        "params": None,
    },
    "table3_D2": {
        "description": "Table 3 (D): P_drop=0.2.",
        "model": {"dropout": 0.2},
        "params": None,
    },
    "table3_D3": {
        "description": "Table 3 (D): eps_ls=0.0.",
        "model": {},
        "training": {"label_smoothing": 0.0},
        "params": None,
    },
    "table3_D4": {
        "description": "Table 3 (D): eps_ls=0.2.",
        "model": {},
        "training": {"label_smoothing": 0.2},
        "params": None,
    },
    # (E) positional embedding instead of sinusoids.
    "table3_E": {
        "description": "Table 3 (E): learned positional embedding.",
        "model": {"position_encoding": "learned"},
        "params": None,
    },
    # §6.3 English constituency parsing: "a 4-layer transformer with
    # d_model = 1024", "all other parameters remained unchanged from the
    # English-to-German base translation model". The paper tuned but does not
    # state dropout; 0.2 residual and attention dropout are tensor2tensor's
    # `transformer_parsing_base` values (a stated choice, not the paper's).
    "parsing_wsj": {
        "description": "§6.3 parsing, WSJ only: N=4, d_model=1024, 16K vocabulary.",
        "model": {
            "num_layers": 4,
            "d_model": 1024,
            "source_vocab_size": 16_000,
            "dropout": 0.2,
            "attention_dropout": 0.2,
        },
        "params": None,
    },
    "parsing_semi_supervised": {
        "description": "§6.3 parsing, semi-supervised: N=4, d_model=1024, 32K vocab.",
        "model": {
            "num_layers": 4,
            "d_model": 1024,
            "source_vocab_size": 32_000,
            "dropout": 0.2,
            "attention_dropout": 0.2,
        },
        "params": None,
    },
}


TRAINING_FIELDS = ("train_steps", "label_smoothing")


def training_values(name):
    """The training values of preset `name`: the base model's, updated with the
    preset's own (Table 3: unlisted values are the base model's).

    Returns:
        A dict with the keys of `TRAINING_FIELDS`.
    """
    if name not in PRESETS:
        raise ValueError(
            f"Unknown preset. Received: name={name!r}. "
            f"Available: {', '.join(sorted(PRESETS))}"
        )
    return {**PRESETS["base"]["training"], **PRESETS[name].get("training", {})}
