"""`import_marian`: a Hugging Face Marian folder becomes one of our runs.

The run directory then works as a trained one: `translate --run-dir`,
`evaluate` (with `--test` files given here), `export` and TF Serving,
`Translator.from_run`. Its recipe has no training data (`data_source="none"`)
and its weights sit in `imported/` (`RunDirectory.imported_weights`), which
`load_run` takes when the run has no checkpoints. `train --train SOURCE
TARGET` fine-tunes it: the run takes its training data and settings then
(`RunDirectory.fixed_field_changes`), `prepare` splits the targets with the
folder's `target.spm`, and training starts from the imported weights
(BUILD_NOTES, "Imported models").
"""

import hashlib
import json
import os

import pipelines
from keras_transformer.decoding.decoding_config import DecodingConfig
from keras_transformer.models.builder import build_transformer
from keras_transformer.recipe import Recipe
from keras_transformer.runs.marian_import.marian_folder import read_marian_folder
from keras_transformer.runs.marian_import.marian_weights import (
    assign_marian_weights,
    marian_weight_map,
    model_overrides,
)
from keras_transformer.runs.run_directory import RunDirectory
from keras_transformer.runs.run_lock import run_lock
from keras_transformer.runs.user_error import UserError
from keras_transformer.training import record_path
from keras_transformer.training.atomic_files import (
    atomic_save_weights,
    atomic_write_json,
)

# The beam of an imported model whose folder names none: the paper's (§6.1)
# and most OPUS-MT folders' `num_beams`; the length penalty then defaults to
# Hugging Face's 1.0 (score / length).
DEFAULT_BEAMS = 4
# Fine-tuning (`train --train` on the imported run): the paper's schedule
# (§5.3) with a short warmup, scaled to peak at this learning rate, about
# where a Marian training run's inverse-square-root decay ends (OPUS-MT: 3e-4
# decayed from 16K updates over hundreds of thousands), then decaying as
# step^-0.5; batches of 4,096 tokens per side, in micro-batches of 2,048 on
# one device (a `base`-sized model within a few GB). All may be changed with
# `--set` on the first `train`.
FINE_TUNE_PEAK_LEARNING_RATE = 5e-5
FINE_TUNE_WARMUP_STEPS = 100
FINE_TUNE_TOKENS_PER_BATCH = 4_096
FINE_TUNE_MAX_TOKENS_PER_REPLICA = 2_048


def import_marian(
    hf_dir,
    run_dir,
    source_language=None,
    target_language=None,
    dev_files=(),
    test_files=(),
    verbose=0,
):
    """Imports a Hugging Face Marian (OPUS-MT) folder as a run directory.

    Args:
        hf_dir: str. The downloaded folder (`config.json`,
            `model.safetensors` or `pytorch_model.bin`, `source.spm`,
            `target.spm`, `vocab.json`; `generation_config.json` and
            `tokenizer_config.json` if present).
        run_dir: str. The run directory to write. A run of another model is
            refused (`RunDirectory.write_recipe`); importing the same folder
            again rewrites the weights.
        source_language: str or `None`. The recipe's source language code;
            default: the folder's `tokenizer_config.json`, else
            language-neutral.
        target_language: str or `None`. The recipe's target language code
            (it picks BLEU's tokenizer); default as `source_language`.
        dev_files: corpus parts for `evaluate` (as `prepare`'s `--dev`).
        test_files: corpus parts for `evaluate` (as `prepare`'s `--test`).
        verbose: int. 1 prints one line per step.

    Returns:
        The path of the imported weights.

    Raises:
        MissingFileError: the folder or one of its files is missing.
        UserError: a model or tokenizer our `Transformer` cannot represent,
            named by field.
    """
    folder = read_marian_folder(hf_dir)
    config = folder.config
    with open(folder.file("vocab.json"), encoding="utf-8") as file:
        vocab = json.load(file)
    if not isinstance(vocab, dict) or len(vocab) != config.get("vocab_size"):
        raise UserError(
            f"vocab.json and config.json disagree: {len(vocab)} pieces, "
            f"vocab_size={config.get('vocab_size')!r}"
        )
    pad_id, eos_id = config.get("pad_token_id"), config.get("eos_token_id")
    start = config.get("decoder_start_token_id", pad_id)
    if start != pad_id:
        raise UserError(
            "Marian decoders start from the pad id. Received: "
            f"decoder_start_token_id={start!r}, pad_token_id={pad_id!r}"
        )
    try:
        pieces, marian_ids = pipelines.marian_vocabulary(vocab, pad_id, eos_id)
        with open(folder.file("source.spm"), "rb") as file:
            source_spm = file.read()
        with open(folder.file("target.spm"), "rb") as file:
            target_spm = file.read()
        tokenizer = pipelines.MarianTokenizer(source_spm, target_spm, pieces)
    except ValueError as error:
        raise UserError(f"{folder.path}: {error}") from None
    recipe = marian_recipe(
        folder,
        tokenizer.vocab_size,
        source_language=source_language,
        target_language=target_language,
        dev_files=dev_files,
        test_files=test_files,
    )
    model = build_transformer(
        recipe.model_config(tokenizer.vocab_size), dtype="float32"
    )
    overrides = dict(recipe.model_overrides)
    values = marian_weight_map(
        folder.read_weights(),
        marian_ids,
        num_encoder_layers=overrides["num_encoder_layers"] or overrides["num_layers"],
        num_decoder_layers=overrides["num_layers"],
        num_heads=overrides["num_heads"],
    )
    assign_marian_weights(model, values)
    run = RunDirectory(run_dir)
    with run_lock(run_dir):
        if run.checkpoints():
            raise UserError(
                f"{run_dir} holds a trained run; import into a new --run-dir."
            )
        run.write_recipe(recipe)
        tokenizer.save(run.tokenizer_path)
        os.makedirs(os.path.dirname(run.imported_weights), exist_ok=True)
        atomic_save_weights(model, run.imported_weights)
        atomic_write_json(
            {
                "recipe": recipe.name,
                "task": recipe.task,
                "model_config": model.get_config(),
                "tokenizer_fingerprint": tokenizer.fingerprint,
                "step": 0,
                "imported_from": {
                    "format": "huggingface-marian",
                    "path": os.path.abspath(folder.path),
                    "weights": os.path.basename(folder.weights_path),
                    "weights_sha256": _sha256(folder.weights_path),
                },
            },
            record_path(run.imported_weights),
        )
    if verbose:
        print(
            f"Imported {folder.path} ({model.count_params():,} parameters, "
            f"vocabulary {tokenizer.vocab_size:,}) into {run_dir}: "
            f"{run.imported_weights}"
        )
    return run.imported_weights


def marian_recipe(
    folder,
    vocab_size,
    source_language=None,
    target_language=None,
    dev_files=(),
    test_files=(),
) -> Recipe:
    """The recipe of an imported folder: its model, tokenizer and search."""
    config, generation = folder.config, folder.generation
    overrides = model_overrides(config)
    beams = int(generation.get("num_beams") or DEFAULT_BEAMS)
    decoding = DecodingConfig(
        method="beam" if beams > 1 else "greedy",
        beam_size=beams,
        alpha=float(generation.get("length_penalty", 1.0)),
        length_normalization="average",
        # `generate()`'s defaults, as the model's authors measured it.
        early_stopping=folder.early_stopping,
        pad_in_softmax=folder.pad_in_softmax,
    )
    tokenizer_config = folder.tokenizer_config
    name = os.path.basename(os.path.normpath(folder.path))
    return Recipe(
        name=f"marian_{name}",
        description=f"Imported from the Hugging Face Marian folder {folder.path}.",
        task="translation",
        data_source="none",
        dataset=None,
        source_language=source_language or tokenizer_config.get("source_lang"),
        target_language=target_language or tokenizer_config.get("target_lang"),
        # The split names of the user's own files (`evaluate --split dev`),
        # as `prepare --train` names them.
        train_split="train",
        dev_split="dev",
        test_split="test",
        dev_files=tuple(dev_files),
        test_files=tuple(test_files),
        tokenizer="marian",
        vocab_size=vocab_size,
        tokenizer_sample_pairs=None,
        model_overrides=tuple(sorted(overrides.items())),
        max_train_length=overrides["max_position_length"],
        decoding=decoding,
        max_beam_size=max(beams, 4),
        warmup_steps=FINE_TUNE_WARMUP_STEPS,
        learning_rate_scale=fine_tune_scale(overrides["d_model"]),
        tokens_per_batch=FINE_TUNE_TOKENS_PER_BATCH,
        max_tokens_per_replica=FINE_TUNE_MAX_TOKENS_PER_REPLICA,
    )


def fine_tune_scale(d_model, peak=FINE_TUNE_PEAK_LEARNING_RATE):
    """The `learning_rate_scale` at which the paper's schedule (§5.3,
    d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)) peaks at `peak`,
    reached at `FINE_TUNE_WARMUP_STEPS`.

    Examples:
        >>> round(fine_tune_scale(512) * 512**-0.5 * 100**-0.5, 12)
        5e-05
    """
    return peak * (d_model * FINE_TUNE_WARMUP_STEPS) ** 0.5


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return f"sha256:{digest.hexdigest()}"
