"""Named recipes: the paper's experiments (and the demo) as ready training jobs.

A `Recipe` binds everything a run needs that is not the machine's business:
the data source and splits, the tokenizer, the model preset, the batch budget,
the schedule, the checkpoint and averaging policy and the decoding settings.
The command line (`keras-transformer train --recipe wmt14_en_de_base`) reads
it; every value can be overridden (`--set warmup_steps=8000`).

What the paper states, and where (Vaswani et al., 2017):

| setting | value | section |
|---|---|---|
| En-De data | WMT 2014, 4.5M pairs, newstest2013 dev, newstest2014 test | §5.1, §6.1 |
| En-De vocabulary | shared byte-pair encoding, ~37,000 tokens | §5.1 |
| En-Fr data | WMT 2014, 36M sentences | §5.1 |
| En-Fr vocabulary | word-piece, 32,000 tokens | §5.1 |
| batch | ~25,000 source + 25,000 target tokens | §5.1 |
| hardware | 8 P100 GPUs | §5.2 |
| steps | base 100,000 (12 h), big 300,000 (3.5 days) | §5.2 |
| optimiser, schedule | Adam(0.9, 0.98, 1e-9), warmup 4,000 | §5.3 |
| label smoothing | 0.1 | §5.4 |
| dropout | base 0.1, big 0.3, big En-Fr 0.1 | §5.4, §6.1 |
| checkpoints | every 10 minutes; average last 5 (base), last 20 (big) | §6.1 |
| decoding | beam 4, alpha 0.6, max length input + 50 | §6.1 |
| Table 3 | En-De base settings, newstest2013, no averaging | §6.2 |

What the paper leaves open and the recipes choose: the maximum training
length (256 tokens, tensor2tensor's), the TFDS builders (`wmt14_translate`,
whose training data is the paper's WMT 2014 set; its `validation` split is
newstest2013 and `test` newstest2014), and SentencePiece BPE for both
vocabularies (the paper's En-Fr word-piece model is not public; `--set
tokenizer=wordpiece` selects ours). The `demo` recipe is ours, chosen by
measurement for ten minutes on two CPU cores (BUILD_NOTES.md).

The 25,000-token batch of the paper is the *effective* batch: with fewer
devices than the paper's eight, `plan_batches` splits it over gradient
accumulation steps so that each device holds at most `max_tokens_per_replica`
tokens per side, and the schedule still counts the paper's updates.
"""

import dataclasses
import math

from keras_transformer.presets import PRESETS
from keras_transformer.transformer_config import TransformerConfig

DATA_SOURCES = ("bundled", "tfds")
TOKENIZERS = ("sentencepiece", "wordpiece")


@dataclasses.dataclass(frozen=True)
class Recipe:
    """Every setting of a training run, with the paper's base En-De defaults.

    Derive variants with `dataclasses.replace` or `Recipe.with_overrides`.
    """

    name: str = "wmt14_en_de_base"
    description: str = "Transformer base, WMT 2014 English-German (§6.1, Table 2)."
    # Data: "bundled" (pipelines/data, offline) or "tfds" (TensorFlow Datasets).
    data_source: str = "tfds"
    dataset: str = "wmt14_translate/de-en"  # TFDS name or bundled corpus name
    source_language: str = "en"
    target_language: str = "de"
    train_split: str = "train"
    dev_split: str = "validation"  # newstest2013 (Table 3 reports on it)
    test_split: str = "test"  # newstest2014 (Table 2)
    # Tokenizer: one shared vocabulary for both sides (§5.1).
    tokenizer: str = "sentencepiece"
    vocab_size: int = 37_000
    tokenizer_sample_pairs: int | None = 1_000_000  # pairs drawn for training it
    # Model: a preset of keras_transformer.presets plus overrides.
    preset: str = "base"
    model_overrides: tuple = ()  # ((field, value), ...), e.g. (("dropout", 0.1),)
    # Batches (§5.1): effective global token budget per side, per update.
    tokens_per_batch: int = 25_000
    max_tokens_per_replica: int = 3_125  # 25,000 over the paper's 8 GPUs
    max_length: int = 256  # longest training sequence per side, in tokens
    # Ratio of consecutive length buckets (pipelines.BatchingConfig); small
    # corpora want coarse buckets, or most batches of an epoch are partial.
    bucket_scale: float = 1.1
    # Training (§5.2-5.4).
    train_steps: int | None = None  # updates; None = the preset's (100K/300K)
    train_minutes: float | None = None  # wall-clock bound, None = no bound
    warmup_steps: int = 4_000
    learning_rate_scale: float = 1.0
    label_smoothing: float = 0.1
    steps_per_epoch: int = 1_000  # batches between backups (resume points)
    checkpoint_every_minutes: float | None = 10.0
    checkpoint_every_steps: int | None = None
    keep_checkpoints: int = 5
    average_last: int = 5  # checkpoints averaged for evaluation and export
    # Decoding (§6.1).
    beam_size: int = 4
    alpha: float = 0.6
    max_extra_length: int = 50
    # Largest per-request beam of the exported `translate` signature (one
    # search is traced per beam size up to it).
    max_beam_size: int = 8
    seed: int = 0

    def __post_init__(self):
        for name, allowed in (
            ("data_source", DATA_SOURCES),
            ("tokenizer", TOKENIZERS),
            ("preset", tuple(PRESETS)),
        ):
            value = getattr(self, name)
            if value not in allowed:
                raise ValueError(
                    f"{name} must be one of {list(allowed)}. Received: {name}={value!r}"
                )
        for name in (
            "vocab_size",
            "tokens_per_batch",
            "max_tokens_per_replica",
            "max_length",
            "warmup_steps",
            "steps_per_epoch",
            "keep_checkpoints",
            "average_last",
            "beam_size",
            "max_beam_size",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(
                    f"{name} must be a positive integer. Received: {name}={value!r}"
                )
        for name in ("train_steps", "tokenizer_sample_pairs", "checkpoint_every_steps"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(
                    f"{name} must be a positive integer or None. Received: "
                    f"{name}={value!r}"
                )
        for name in ("train_minutes", "checkpoint_every_minutes", "bucket_scale"):
            value = getattr(self, name)
            if value is not None and (
                not isinstance(value, (int, float))
                or isinstance(value, bool)
                or not value > 0
            ):
                raise ValueError(
                    f"{name} must be positive or None. Received: {name}={value!r}"
                )
        if self.beam_size > self.max_beam_size:
            raise ValueError(
                "beam_size cannot exceed max_beam_size. Received: "
                f"beam_size={self.beam_size}, max_beam_size={self.max_beam_size}"
            )
        if self.average_last > self.keep_checkpoints:
            raise ValueError(
                "average_last cannot exceed keep_checkpoints. Received: "
                f"average_last={self.average_last}, "
                f"keep_checkpoints={self.keep_checkpoints}"
            )
        # Fails early, naming the field, if an override is not a config field.
        self.model_config(vocab_size=self.vocab_size)

    def model_config(self, vocab_size):
        """The `TransformerConfig` of this recipe for a tokenizer of `vocab_size`."""
        return TransformerConfig.from_preset(
            self.preset,
            **dict(self.model_overrides),
            source_vocab_size=vocab_size,
            max_length=max(self.max_length, 256),
        )

    @property
    def total_train_steps(self):
        """Updates to train for: `train_steps`, else the preset's."""
        if self.train_steps is not None:
            return self.train_steps
        return self.model_config(self.vocab_size).train_steps

    def with_overrides(self, overrides):
        """A copy with `{field: value}` overrides; `model.<field>` keys (e.g.
        `model.dropout`) override the model preset's fields."""
        fields = {field.name: field for field in dataclasses.fields(self)}
        model = dict(self.model_overrides)
        direct = {}
        for key, value in overrides.items():
            if key.startswith("model."):
                model[key[len("model.") :]] = value
            elif key in fields and key != "model_overrides":
                direct[key] = value
            else:
                raise ValueError(
                    "Unknown recipe field; expected one of "
                    f"{sorted(set(fields) - {'model_overrides'})} or model.<field>. "
                    f"Received: {key}={value!r}"
                )
        return dataclasses.replace(
            self, model_overrides=tuple(sorted(model.items())), **direct
        )

    def to_dict(self):
        """JSON-ready dict (`from_dict` inverts it)."""
        data = dataclasses.asdict(self)
        data["model_overrides"] = dict(self.model_overrides)
        return data

    @classmethod
    def from_dict(cls, data):
        data = dict(data)
        data["model_overrides"] = tuple(sorted(data.get("model_overrides", {}).items()))
        return cls(**data)


def plan_batches(recipe, num_replicas):
    """Splits the effective batch over replicas and accumulation steps (§5.1).

    Returns:
        `(tokens_per_step, accumulation_steps)`: the global token budget of one
        batch fed to `model.fit` and the number of batches per update, such
        that `tokens_per_step * accumulation_steps` is about
        `recipe.tokens_per_batch` and each replica holds at most
        `recipe.max_tokens_per_replica` tokens per side.
    """
    if not isinstance(num_replicas, int) or num_replicas < 1:
        raise ValueError(
            f"num_replicas must be a positive integer. Received: "
            f"num_replicas={num_replicas!r}"
        )
    per_step_limit = recipe.max_tokens_per_replica * num_replicas
    accumulation = max(1, math.ceil(recipe.tokens_per_batch / per_step_limit))
    return recipe.tokens_per_batch // accumulation, accumulation


def _paper(name, description, **fields):
    return Recipe(name=name, description=description, **fields)


def _table3(preset):
    description = PRESETS[preset]["description"]
    return _paper(
        f"wmt14_en_de_{preset}",
        f"{description} En-De, reported on newstest2013 without averaging (§6.2).",
        preset=preset,
        test_split="validation",
        average_last=1,
        keep_checkpoints=1,
    )


RECIPES = {
    recipe.name: recipe
    for recipe in (
        _paper(
            "wmt14_en_de_base",
            "Transformer base, WMT 2014 English-German: 27.3 BLEU in Table 2.",
        ),
        _paper(
            "wmt14_en_de_big",
            "Transformer big, WMT 2014 English-German: 28.4 BLEU in Table 2.",
            preset="big",
            keep_checkpoints=20,
            average_last=20,
        ),
        _paper(
            "wmt14_en_fr_big",
            "Transformer big, WMT 2014 English-French, dropout 0.1 (§6.1): "
            "41.8 BLEU in Table 2.",
            dataset="wmt14_translate/fr-en",
            target_language="fr",
            vocab_size=32_000,
            preset="big",
            model_overrides=(("dropout", 0.1),),
            keep_checkpoints=20,
            average_last=20,
        ),
        *(_table3(preset) for preset in PRESETS if preset.startswith("table3_")),
        Recipe(
            name="demo",
            description=(
                "Small pre-norm Transformer on the bundled LibreOffice help, "
                "English-German, ten minutes on two CPU cores (settings chosen "
                "by measurement, BUILD_NOTES.md)."
            ),
            data_source="bundled",
            dataset="libreoffice_help",
            dev_split="dev",
            test_split="test",
            vocab_size=4_000,
            tokenizer_sample_pairs=None,
            preset="base",
            model_overrides=(
                ("d_ff", 1024),
                ("d_model", 256),
                ("dropout", 0.0),
                ("normalize_first", True),
                ("num_heads", 4),
                ("num_layers", 2),
            ),
            tokens_per_batch=1_024,
            max_tokens_per_replica=1_024,
            max_length=96,
            bucket_scale=2.0,
            train_minutes=10.0,
            train_steps=100_000,
            warmup_steps=100,
            learning_rate_scale=0.32,
            steps_per_epoch=50,
            checkpoint_every_minutes=0.5,
            keep_checkpoints=3,
            average_last=3,
        ),
    )
}


def get_recipe(name, **overrides):
    """The recipe called `name`, with optional field overrides.

    Raises:
        ValueError: unknown name or field, naming it.
    """
    if name not in RECIPES:
        raise ValueError(
            f"Unknown recipe; expected one of {sorted(RECIPES)}. Received: "
            f"recipe={name!r}"
        )
    recipe = RECIPES[name]
    return recipe.with_overrides(overrides) if overrides else recipe
