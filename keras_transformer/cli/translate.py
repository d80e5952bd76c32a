"""`keras-transformer translate`: the translator of a run or an export.

The streaming of lines in and translations out (length-sorted batches,
input order, the `.partial` file, the progress line) is
`cli.line_streaming`'s, which `parse` shares."""

from keras_transformer.cli.option_checks import export_decoding
from keras_transformer.cli.saved_model_files import load_saved_model
from keras_transformer.cli.user_error import UserError


def load_translator(
    run_dir=None, export_dir=None, weights=None, overrides=None, compute_dtype=None
):
    """The translator of a run directory or of an exported SavedModel.

    Both run the exported search (`savedmodels.TranslatorModule`): in-process
    from a run's weights (with the arguments `export` uses,
    `translator_arguments`), or the SavedModel's `translate` signature.

    Args:
        run_dir, export_dir: exactly one of them.
        weights: with `run_dir`, a weights file (default: the newest).
        overrides: dict or `None`. `DecodingConfig` fields given by the user;
            the others are the run's recipe's, or the export's recorded ones.
        compute_dtype: with `run_dir`, `"float32"` (`None`: the default) or
            `"bfloat16"` (`load_trained_model`); an export computes in the
            dtype it was exported with.

    Returns:
        `(translator, decoding)`: `translator(texts, decoding) ->
        (translations [B, n] str, scores [B, n])` and the `DecodingConfig`
        to use.
    """
    import tensorflow as tf

    if (run_dir is None) == (export_dir is None):
        raise UserError("Give exactly one of --run-dir and --export.")
    check_export_compute_dtype(export_dir, compute_dtype)
    if export_dir is not None:
        signature = load_saved_model(export_dir).signatures.get("translate")
        if signature is None:
            raise UserError(
                f"{export_dir} has no `translate` signature (a parsing export? "
                "use `keras-transformer parse --export`)."
            )
        decoding = export_decoding(export_dir).with_overrides(**(overrides or {}))
    else:
        from keras_transformer.cli.export import translator_arguments
        from keras_transformer.cli.trained_model import load_trained_model
        from savedmodels import TranslatorModule

        recipe, tokenizer, model, _ = load_trained_model(
            run_dir, weights, compute_dtype=compute_dtype or "float32"
        )
        decoding = recipe.decoding.with_overrides(**(overrides or {}))
        # Traces the searches up to the asked beam only (one per beam size).
        arguments = translator_arguments(recipe, decoding, decoding.beam_size)
        decoding = arguments["decoding"]  # the search the module runs
        signature = TranslatorModule(model, tokenizer, **arguments).translate

    def run(texts, decoding):
        outputs = signature(
            text=tf.constant(texts, tf.string),
            beam_size=tf.constant(decoding.beam_size, tf.int32),
            alpha=tf.constant(decoding.alpha, tf.float32),
            max_extra_length=tf.constant(decoding.max_extra_length, tf.int32),
            n_best=tf.constant(decoding.n_best, tf.int32),
        )
        translations = [
            [t.decode("utf-8") for t in row] for row in outputs["translations"].numpy()
        ]
        return translations, outputs["scores"].numpy().tolist()

    return run, decoding


def check_export_compute_dtype(export_dir, compute_dtype):
    """Refuses `--compute-dtype` with `--export`: an export computes in the
    dtype it was exported with."""
    if export_dir is not None and compute_dtype is not None:
        raise UserError(
            "--compute-dtype is for --run-dir: an export computes in the dtype "
            "it was exported with (`export --compute-dtype`). "
            f"Received: --compute-dtype {compute_dtype}"
        )
