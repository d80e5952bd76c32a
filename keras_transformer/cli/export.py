"""`keras-transformer export`: the run's translator as a versioned SavedModel."""

import dataclasses
import os

from keras_transformer.cli.run_directory import RunDirectory
from keras_transformer.cli.run_tokenizer import load_target_tokenizer
from keras_transformer.cli.trained_model import load_trained_model
from keras_transformer.training import record_path
from keras_transformer.training.atomic_files import read_json


def export(
    run_dir,
    weights=None,
    version=None,
    overwrite=False,
    tf_text_version=None,
    verbose=1,
    compute_dtype="float32",
):
    """Exports tokenizer + weights + beam search to `<run_dir>/export/<version>/`.

    `serving_default` decodes with the recipe's `decoding` (§6.1); the record
    beside the export names the weights, the averaged steps and, when
    `evaluate` has run on the test split, its BLEU and signature. Inputs are
    truncated to the recipe's training length (`max_train_length` positions,
    eos included), which also bounds the export's decoding buffer (sized per
    request, at most `max_train_length` + `max_extra_length`); see
    `translator_arguments`.
    `tf_text_version` is the tensorflow-text release of the target TF Serving
    for the op check: `None` for the release stock TF Serving links
    (`savedmodels.export_translator`'s default), `"none"` to skip the check.
    `compute_dtype` `"bfloat16"` exports the model computing in bfloat16
    (`load_trained_model`; the record names it, and only an evaluation made
    in the same compute dtype is copied into it).

    Returns:
        The path of the written version directory.
    """
    from savedmodels import export_translator

    recipe, tokenizer, model, weights = load_trained_model(
        run_dir, weights, task=None, compute_dtype=compute_dtype
    )
    run = RunDirectory(run_dir)
    parser = {}
    if recipe.task == "parsing":  # a `parse` signature, trees out (§6.3)
        parser = {
            "target_tokenizer": load_target_tokenizer(run, recipe),
            "tree_tags": recipe.tree_tags,
        }
    record = {
        "recipe": recipe.to_dict(),
        "weights": os.path.abspath(weights),
        "compute_dtype": compute_dtype,
    }
    weights_record = record_path(weights)
    if os.path.exists(weights_record):
        checkpoint = read_json(weights_record)
        record["step"] = checkpoint.get("step")
        record["averaged_steps"] = checkpoint.get("averaged_steps")
    scores_path = run.join("eval", f"{recipe.test_split}.json")
    if os.path.exists(scores_path):
        scores = read_json(scores_path)
        # An evaluation of these weights in this compute dtype (older
        # evaluations, without the field, were float32).
        if (scores.get("weights"), scores.get("compute_dtype", "float32")) == (
            weights,
            compute_dtype,
        ):
            record["evaluation"] = {
                key: scores.get(key)
                for key in (
                    "split",
                    "sentences",
                    "target_language",
                    "bleu",
                    "bleu_signature",
                    "chrf",
                    "chrf_signature",
                    "f1",
                    "f1_len_40",
                )
            }
    path = export_translator(
        model,
        tokenizer,
        run.export_dir,
        version=version,
        overwrite=overwrite,
        record=record,
        **translator_arguments(recipe),
        **_op_check(tf_text_version),
        **parser,
        progress=bool(verbose),
    )
    if verbose:
        print(f"SavedModel: {path}")
    return path


def translator_arguments(recipe, decoding=None, max_beam_size=None):
    """The `TranslatorModule` arguments of a run, shared by `export` and
    `translate --run-dir`, so that both turn a line into the same ids and
    decode it the same way.

    The export runs beam search: a greedy `decoding` becomes beam search
    with K = 1 (greedy search's result when alpha = 0; with alpha > 0 the
    one beam may go on past greedy's eos to a later one whose penalised
    score is higher;
    a bracket-constrained parser's K = 1 is greedy search, `one_beam_as_greedy`),
    and sampling, which the export does not offer, is refused naming it.

    Args:
        recipe: the run's `Recipe`.
        decoding: a `DecodingConfig`, or `None` for the recipe's.
        max_beam_size: int, or `None` for the recipe's (at least the beam
            size of `decoding`).

    Raises:
        ValueError: `decoding.method` is `"sample"`.
    """
    decoding = recipe.decoding if decoding is None else decoding
    if decoding.method == "sample":
        raise ValueError(
            "The export and `translate` run beam search (or greedy, as a "
            "1-beam search); sampling is for the library's `translate`. "
            f"Received: decoding.method={decoding.method!r}"
        )
    if decoding.method == "greedy":
        decoding = dataclasses.replace(decoding, method="beam", beam_size=1, n_best=1)
    if max_beam_size is None:
        max_beam_size = max(recipe.max_beam_size, decoding.beam_size)
    return {
        "decoding": decoding,
        # The export's inputs are cut to the training length (the model
        # never saw longer sources), by the same `encode_sources` as
        # evaluation's.
        "max_input_length": recipe.max_train_length,
        "max_beam_size": max_beam_size,
    }


def _op_check(tf_text_version):
    """`export_translator`'s op-check argument for `--tf-text-version`."""
    if tf_text_version is None:
        return {}  # the export's default target
    if str(tf_text_version).strip().lower() == "none":
        return {"serving_tf_text_version": None}  # no check
    return {"serving_tf_text_version": tf_text_version}
