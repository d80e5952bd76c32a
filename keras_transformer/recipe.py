"""The `Recipe` dataclass: everything a run needs that is not the machine's
business (data source and splits, tokenizer, model preset and overrides, batch
budget, schedule, checkpoint and averaging policy, decoding), with its checks,
overrides (`with_overrides`: `--set`) and JSON form (`recipe.json`). The named
recipes, the paper's experiments, are in `keras_transformer.recipes`.
"""

import dataclasses

from keras_transformer.decoding.decoding_config import DecodingConfig
from keras_transformer.precisions import PRECISION_CHOICES
from keras_transformer.presets import PRESETS, training_values
from keras_transformer.transformer_config import TransformerConfig
from keras_transformer.validation import (
    check_dataclass_fields,
    check_one_of,
    check_positive_float,
    check_positive_int,
    check_rate,
)

DATA_SOURCES = ("bundled", "tfds", "files", "treebank", "none")
# Translation, or English constituency parsing (§6.3): trees in, read as
# (words, linearized tree) pairs, scored by labelled bracket F1.
TASKS = ("translation", "parsing")
# The WSJ sections of the standard parsing split (§6.3).
WSJ_SECTIONS = {"train": "02-21", "dev": "22", "test": "23"}
ON_BAD_LINE = ("skip", "fail")
# The splits of a "files" recipe, each a tuple of corpus parts.
FILE_SPLITS = {"train": "train_files", "dev": "dev_files", "test": "test_files"}
# "marian" comes with an imported model (`runs.marian_import`); never trained.
TOKENIZERS = ("sentencepiece", "wordpiece", "marian")
# Prefixes of `with_overrides` keys that reach a nested config.
NESTED = {"model.": "model_overrides", "decoding.": "decoding"}


@dataclasses.dataclass(frozen=True)
class Recipe:
    """Every setting of a training run, with the paper's base En-De defaults.

    Each setting has one owner: the model is the preset plus `model_overrides`
    (`model_config`), the training values that Table 3 varies (`train_steps`,
    `label_smoothing`) default to the preset's own (`None` here), and the
    search is one `DecodingConfig`. Derive variants with `dataclasses.replace`
    or `Recipe.with_overrides`.
    """

    name: str = "wmt14_en_de_base"
    description: str = "Transformer base, WMT 2014 English-German (§6.1, Table 2)."
    task: str = "translation"
    # Data: "bundled" (pipelines/data, offline), "tfds" (TensorFlow Datasets)
    # or "files" (the user's own: `train_files`, `dev_files`, `test_files`);
    # "none": no training data, an imported model (`runs.marian_import`),
    # with at most `dev_files` and `test_files` for evaluation.
    data_source: str = "tfds"
    dataset: str | None = "wmt14_translate/de-en"  # TFDS or bundled corpus name
    # Language codes (BCP-47, e.g. "en", "zh-Hant"): TFDS feature keys, the
    # bundled pair, and BLEU's tokenizer (the target's); `None` (files only)
    # is language-neutral.
    source_language: str | None = "en"
    target_language: str | None = "de"
    train_split: str = "train"
    dev_split: str = "validation"  # newstest2013 (Table 3 reports on it)
    test_split: str = "test"  # newstest2014 (Table 2)
    # "files": each split is a tuple of corpus parts read one after the other,
    # a part being `(tsv,)` or `(source, target)` (plain, .gz or .xz).
    train_files: tuple = ()
    dev_files: tuple = ()
    test_files: tuple = ()
    # Bad pairs (invalid UTF-8, a malformed TSV line, an empty side, too long,
    # the ratio): "skip" drops and counts them by reason, "fail" stops at the
    # first, naming the file and line.
    on_bad_line: str = "skip"
    # Longest subword-count ratio of a training pair's sides; None (the
    # paper's) does not filter on it (Moses' clean-corpus-n uses 9).
    max_length_ratio: float | None = None
    # Parsing (§6.3): "treebank" reads the WSJ sections of an LDC Penn
    # Treebank under `treebank_dir` (plus, for training, the tree files of
    # `train_files`: the semi-supervised setting); "bundled" the GUM trees;
    # "files" tree files (one path per part). `tree_tags` linearizes with
    # POS tags instead of XX (Vinyals et al. 2015).
    treebank_dir: str | None = None
    train_sections: str = WSJ_SECTIONS["train"]
    dev_sections: str = WSJ_SECTIONS["dev"]
    test_sections: str = WSJ_SECTIONS["test"]
    tree_tags: bool = False
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
    # Longest training sequence per side, in tokens (the length filter); the
    # export truncates its inputs to it too.
    max_train_length: int = 256
    # Ratio of consecutive length buckets (pipelines.BatchingConfig); small
    # corpora want coarse buckets, or most batches of an epoch are partial.
    bucket_scale: float = 1.1
    # Length of the first bucket, where every shorter side is padded to
    # (tensor2tensor's 8); a corpus of many short pairs pads less from a
    # smaller one (BUILD_NOTES.md, "Mixed-precision training": the demo).
    min_bucket_length: int = 8
    # Training (§5.2-5.4).
    train_steps: int | None = None  # updates; None = the preset's (100K/300K)
    train_minutes: float | None = None  # wall-clock bound, None = no bound
    warmup_steps: int = 4_000
    learning_rate_scale: float = 1.0
    # The Keras dtype policy of training (`precisions.PRECISIONS`), or
    # "auto" (`precisions.resolve_precision`, the CPU demos'); the paper's
    # float32 by default. Variables and checkpoints stay float32.
    precision: str = "float32"
    label_smoothing: float | None = None  # eps_ls; None = the preset's (§5.4)
    steps_per_epoch: int = 1_000  # batches between backups (resume points)
    checkpoint_every_minutes: float | None = 10.0
    checkpoint_every_steps: int | None = None
    keep_checkpoints: int = 5
    average_last: int = 5  # checkpoints averaged for evaluation and export
    # Decoding (§6.1): evaluation, translation and the export's default.
    decoding: DecodingConfig = DecodingConfig()
    # Largest per-request beam of the exported `translate` signature (one
    # search is traced per beam size up to it).
    max_beam_size: int = 8
    seed: int = 0

    def __post_init__(self):
        for name in FILE_SPLITS.values():  # JSON lists -> hashable tuples
            object.__setattr__(self, name, _corpus_parts(name, getattr(self, name)))
        check_one_of("task", self.task, TASKS)
        check_one_of("data_source", self.data_source, DATA_SOURCES)
        check_one_of("on_bad_line", self.on_bad_line, ON_BAD_LINE)
        self._check_data()
        check_one_of("tokenizer", self.tokenizer, TOKENIZERS)
        check_one_of("preset", self.preset, tuple(PRESETS))
        check_one_of("precision", self.precision, PRECISION_CHOICES)
        for name in (
            "vocab_size",
            "tokens_per_batch",
            "max_tokens_per_replica",
            "max_train_length",
            "min_bucket_length",
            "warmup_steps",
            "steps_per_epoch",
            "keep_checkpoints",
            "average_last",
            "max_beam_size",
        ):
            check_positive_int(name, getattr(self, name))
        for name in ("train_steps", "tokenizer_sample_pairs", "checkpoint_every_steps"):
            check_positive_int(name, getattr(self, name), allow_none=True)
        for name in ("train_minutes", "checkpoint_every_minutes"):
            check_positive_float(name, getattr(self, name), allow_none=True)
        check_positive_float("bucket_scale", self.bucket_scale)
        if self.min_bucket_length > self.max_train_length:
            raise ValueError(
                "min_bucket_length must be at most max_train_length. Received: "
                f"min_bucket_length={self.min_bucket_length}, "
                f"max_train_length={self.max_train_length}"
            )
        ratio = self.max_length_ratio
        if ratio is not None and not (
            isinstance(ratio, int | float)
            and not isinstance(ratio, bool)
            and ratio >= 1
        ):
            raise ValueError(
                f"max_length_ratio must be a number >= 1 or None. Received: "
                f"max_length_ratio={ratio!r}"
            )
        check_positive_float("learning_rate_scale", self.learning_rate_scale)
        if self.label_smoothing is not None:
            check_rate("label_smoothing", self.label_smoothing)
        if not isinstance(self.decoding, DecodingConfig):
            raise ValueError(
                "`decoding` expected a DecodingConfig. "
                f"Received: decoding={self.decoding!r}"
            )
        if self.decoding.beam_size > self.max_beam_size:
            raise ValueError(
                "decoding.beam_size cannot exceed max_beam_size. Received: "
                f"decoding.beam_size={self.decoding.beam_size}, "
                f"max_beam_size={self.max_beam_size}"
            )
        if self.average_last > self.keep_checkpoints:
            raise ValueError(
                "average_last cannot exceed keep_checkpoints. Received: "
                f"average_last={self.average_last}, "
                f"keep_checkpoints={self.keep_checkpoints}"
            )
        # Fails early, naming the field, if an override is not a config field.
        config = self.model_config(vocab_size=self.vocab_size)
        if config.next_word_pointer and self.task != "parsing":
            raise ValueError(
                "The next-word pointer reads linearized trees (task='parsing'). "
                f"Received: task={self.task!r}, model.next_word_pointer=True"
            )
        if self.max_train_length > config.max_position_length:
            raise ValueError(
                "max_train_length cannot exceed the model's positions "
                "(set model.max_position_length). Received: "
                f"max_train_length={self.max_train_length}, "
                f"model.max_position_length={config.max_position_length}"
            )

    def _check_data(self):
        if self.data_source == "treebank" and self.task != "parsing":
            raise ValueError(
                "A treebank is parsing data (task='parsing'). Received: "
                f"task={self.task!r}"
            )
        if self.data_source == "tfds" and self.task == "parsing":
            raise ValueError(
                "Parsing reads trees: data_source 'treebank', 'bundled' (GUM) or "
                "'files'. Received: data_source='tfds'"
            )
        if self.data_source == "treebank":
            return
        if self.data_source == "none":
            if self.train_files or self.task != "translation":
                raise ValueError(
                    "data_source='none' is an imported translation model without "
                    "training data. Received: "
                    f"task={self.task!r}, train_files={self.train_files!r}"
                )
            return
        if self.data_source == "files":
            if not self.train_files:
                raise ValueError(
                    "data_source='files' needs training files (--train SOURCE "
                    "TARGET, or --train FILE.tsv). Received: train_files=()"
                )
            return
        if self.task == "parsing":
            return
        given = [name for name in FILE_SPLITS.values() if getattr(self, name)]
        if given:
            raise ValueError(
                f"{given[0]} needs data_source='files'. Received: "
                f"data_source={self.data_source!r}"
            )
        for name in ("dataset", "source_language", "target_language"):
            if getattr(self, name) is None:
                raise ValueError(
                    f"data_source={self.data_source!r} needs {name}. "
                    f"Received: {name}=None"
                )

    def split_files(self, split):
        """The corpus parts of `split` of a "files" recipe: the train, dev or
        test files, by the recipe's split names."""
        names = {
            self.train_split: "train_files",
            self.dev_split: "dev_files",
            self.test_split: "test_files",
        }
        if split not in names:
            raise ValueError(
                f"Unknown split; expected one of {sorted(names)}. Received: "
                f"split={split!r}"
            )
        parts = getattr(self, names[split])
        if not parts and self.data_source == "none":
            option = names[split].split("_")[0]
            if option == "train":
                raise ValueError(
                    "An imported model's run has no training data; fine-tune it "
                    "with `train --run-dir RUN --train SOURCE TARGET` (or "
                    f"FILE.tsv). Received: split={split!r}"
                )
            raise ValueError(
                f"The imported run has no {option} files; give them to "
                f"`import-marian` with --{option} SOURCE TARGET (or FILE.tsv). "
                f"Received: split={split!r}"
            )
        if not parts:
            option = names[split].split("_")[0]
            raise ValueError(
                f"The run has no {option} files; give them to `prepare` with "
                f"--{option} SOURCE TARGET (or FILE.tsv). Received: split={split!r}"
            )
        return parts

    def model_config(self, vocab_size, target_vocab_size=None):
        """The `TransformerConfig` of this recipe for a tokenizer of
        `vocab_size` (and, for parsing, a target vocabulary of
        `target_vocab_size` whole-token symbols: then the embeddings are not
        shared, the output projection is tied to the target's, §6.3)."""
        overrides = dict(self.model_overrides)
        if target_vocab_size is not None:
            overrides.update(
                target_vocab_size=target_vocab_size, shared_embeddings=False
            )
        return TransformerConfig.from_preset(
            self.preset, **overrides, source_vocab_size=vocab_size
        )

    @property
    def total_train_steps(self) -> int:
        """Updates to train for: `train_steps`, else the preset's (§5.2)."""
        if self.train_steps is not None:
            return self.train_steps
        return training_values(self.preset)["train_steps"]

    @property
    def effective_label_smoothing(self) -> float:
        """eps_ls: `label_smoothing`, else the preset's (§5.4, Table 3 row D)."""
        if self.label_smoothing is not None:
            return self.label_smoothing
        return training_values(self.preset)["label_smoothing"]

    def with_overrides(self, overrides):
        """A copy with `{field: value}` overrides; `model.<field>` keys (e.g.
        `model.dropout`) override the model preset's fields and
        `decoding.<field>` keys (e.g. `decoding.beam_size`) the search's."""
        fields = {field.name for field in dataclasses.fields(self)}
        nested = {"model_overrides": dict(self.model_overrides), "decoding": {}}
        direct = {}
        for key, value in overrides.items():
            prefix = next((p for p in NESTED if key.startswith(p)), None)
            if prefix is not None:
                nested[NESTED[prefix]][key[len(prefix) :]] = value
            elif key in fields and key not in NESTED.values():
                direct[key] = value
            else:
                known = sorted(fields - set(NESTED.values()))
                raise ValueError(
                    f"Unknown recipe field; expected one of {known}, model.<field> "
                    f"or decoding.<field>. Received: {key}={value!r}"
                )
        check_dataclass_fields(DecodingConfig, nested["decoding"])
        return dataclasses.replace(
            self,
            model_overrides=tuple(sorted(nested["model_overrides"].items())),
            decoding=dataclasses.replace(self.decoding, **nested["decoding"]),
            **direct,
        )

    def to_dict(self):
        """JSON-ready dict (`from_dict` inverts it)."""
        data = dataclasses.asdict(self)
        data["model_overrides"] = dict(self.model_overrides)
        return data

    @classmethod
    def from_dict(cls, data):
        """The inverse of `to_dict`; an unknown key (a record of another
        version) fails naming it."""
        check_dataclass_fields(cls, data)
        data = dict(data)
        data["model_overrides"] = tuple(sorted(data.get("model_overrides", {}).items()))
        if "decoding" in data:
            data["decoding"] = DecodingConfig.from_dict(data["decoding"])
        return cls(**data)


def _corpus_parts(name, parts):
    """`parts` as a tuple of tuples of str paths, each of one or two paths."""
    if isinstance(parts, str):
        parts = (parts,)
    result = []
    for part in parts:
        part = (part,) if isinstance(part, str) else tuple(part)
        if len(part) not in (1, 2) or not all(isinstance(p, str) for p in part):
            raise ValueError(
                f"Each part of {name} is [tsv] or [source, target] paths. "
                f"Received: {name}={parts!r}"
            )
        result.append(part)
    return tuple(result)
