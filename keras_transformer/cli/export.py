"""`keras-transformer export`: the run's translator as a versioned SavedModel."""

import os

from keras_transformer.cli.run_directory import RunDirectory
from keras_transformer.cli.trained_model import load_trained_model
from keras_transformer.training.atomic_files import read_json


def export(
    run_dir,
    weights=None,
    version=None,
    overwrite=False,
    tf_text_version="2.20",
    verbose=1,
):
    """Exports tokenizer + weights + beam search to `<run_dir>/export/<version>/`.

    The beam size and alpha of `serving_default` are the recipe's (§6.1);
    the record beside the export names the weights, the averaged steps and,
    when `evaluate` has run on the test split, its BLEU and signature. Inputs
    are truncated to the recipe's training length (`max_length` pieces), which
    also bounds the export's fixed decoding buffer (`max_length` + 50).
    `tf_text_version` is the tensorflow-text release of the target TF Serving
    for the op check (`None` skips it).

    Returns:
        The path of the written version directory.
    """
    from savedmodels import export_translator

    recipe, tokenizer, model, weights = load_trained_model(run_dir, weights)
    run = RunDirectory(run_dir)
    record = {"recipe": recipe.to_dict(), "weights": os.path.abspath(weights)}
    weights_record = weights.replace(".weights.h5", ".json")
    if os.path.exists(weights_record):
        checkpoint = read_json(weights_record)
        record["step"] = checkpoint.get("step")
        record["averaged_steps"] = checkpoint.get("averaged_steps")
    scores_path = run.join("eval", f"{recipe.test_split}.json")
    if os.path.exists(scores_path):
        scores = read_json(scores_path)
        if scores.get("weights") == weights:
            record["evaluation"] = {
                key: scores.get(key)
                for key in ("split", "sentences", "bleu", "bleu_signature", "chrf")
            }
    path = export_translator(
        model,
        tokenizer,
        run.export_dir,
        version=version,
        overwrite=overwrite,
        beam_size=recipe.beam_size,
        alpha=recipe.alpha,
        max_extra_length=recipe.max_extra_length,
        max_input_length=recipe.max_length,
        max_beam_size=recipe.max_beam_size,
        record=record,
        serving_tf_text_version=tf_text_version,
    )
    if verbose:
        print(f"SavedModel: {path}")
    return path
