"""Export: a run's translator (or parser) as a versioned SavedModel."""

import os

from keras_transformer.parsing.parse_search import search_constraint
from keras_transformer.runs.loaded_run import load_run
from keras_transformer.training import record_path
from keras_transformer.training.atomic_files import read_json
from keras_transformer.translation.translator import translator_arguments


def export(
    run_dir,
    weights=None,
    version=None,
    overwrite=False,
    tf_text_version=None,
    verbose=0,
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
    (`load_run`; the record names it, and only an evaluation made
    in the same compute dtype is copied into it).

    Returns:
        The path of the written version directory.
    """
    from savedmodels import export_translator

    loaded = load_run(run_dir, weights, compute_dtype=compute_dtype)
    recipe, run, weights = loaded.recipe, loaded.run, loaded.weights
    parser = {}
    if recipe.task == "parsing":  # a `parse` signature, trees out (§6.3)
        parser = {
            "target_tokenizer": loaded.target_tokenizer,
            "tree_tags": recipe.tree_tags,
        }
        parser["constraint"] = search_constraint(loaded, recipe.decoding)
    record = {
        "recipe": recipe.to_dict(),
        "weights": os.path.abspath(weights),
        "compute_dtype": loaded.model.compute_dtype,  # `auto` resolved
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
            loaded.model.compute_dtype,
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
        loaded.model,
        loaded.tokenizer,
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


def _op_check(tf_text_version):
    """`export_translator`'s op-check argument for `--tf-text-version`."""
    if tf_text_version is None:
        return {}  # the export's default target
    if str(tf_text_version).strip().lower() == "none":
        return {"serving_tf_text_version": None}  # no check
    return {"serving_tf_text_version": tf_text_version}
