"""`keras-transformer translate`: lines in, translations out (n-best optional)."""

import json
import os
import sys

from keras_transformer.cli.user_error import UserError
from keras_transformer.decoding.decoding_config import DecodingConfig


def load_translator(run_dir=None, export_dir=None, weights=None, overrides=None):
    """The translator of a run directory or of an exported SavedModel.

    Both run the exported search (`savedmodels.TranslatorModule`): in-process
    from a run's weights (with the arguments `export` uses,
    `translator_arguments`), or the SavedModel's `translate` signature.

    Args:
        run_dir, export_dir: exactly one of them.
        weights: with `run_dir`, a weights file (default: the newest).
        overrides: dict or `None`. `DecodingConfig` fields given by the user;
            the others are the run's recipe's, or the export's recorded ones.

    Returns:
        `(translator, decoding)`: `translator(texts, decoding) ->
        (translations [B, n] str, scores [B, n])` and the `DecodingConfig`
        to use.
    """
    import tensorflow as tf

    if (run_dir is None) == (export_dir is None):
        raise UserError("Give exactly one of --run-dir and --export.")
    if export_dir is not None:
        try:
            import tensorflow_text  # noqa: F401  (registers the tokenizer ops)

            signature = tf.saved_model.load(export_dir).signatures["translate"]
        except (OSError, ValueError) as error:
            raise UserError(
                f"Cannot load the SavedModel {export_dir}: {error}"
            ) from None
        decoding = _export_decoding(export_dir).with_overrides(**(overrides or {}))
    else:
        from keras_transformer.cli.export import translator_arguments
        from keras_transformer.cli.trained_model import load_trained_model
        from savedmodels import TranslatorModule

        recipe, tokenizer, model, _ = load_trained_model(run_dir, weights)
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


def _export_decoding(export_dir):
    """The `DecodingConfig` an export was written with (its record), else the
    paper's."""
    from savedmodels.export import RECORD_PATH

    path = os.path.join(export_dir, RECORD_PATH)
    if not os.path.exists(path):
        return DecodingConfig()
    with open(path, encoding="utf-8") as f:
        recorded = json.load(f).get("decoding", {})
    fields = DecodingConfig.__dataclass_fields__
    return DecodingConfig(**{k: v for k, v in recorded.items() if k in fields})


def translate_lines(
    translator,
    lines,
    output=None,
    decoding=None,
    batch_size=32,
    total=None,
    progress=None,
):
    """Translates an iterable of lines in batches, writing as it goes.

    With `decoding.n_best == 1` one translation per line; otherwise `n_best`
    lines per input in the Moses n-best format `index ||| translation |||
    score`. An empty line gives an empty translation (score 0).

    Args:
        translator: from `load_translator`.
        lines: iterable of str (newlines are stripped).
        output: a text stream. Defaults to `sys.stdout` at call time.
        decoding: a `DecodingConfig`. Defaults to `DecodingConfig()`.
        batch_size: int. Lines per call. Defaults to `32`.
        total: int or `None`. Number of lines, for the progress display.
        progress: a text stream for progress (e.g. stderr) or `None`.

    Returns:
        The number of lines translated.
    """
    decoding = DecodingConfig() if decoding is None else decoding
    output = sys.stdout if output is None else output
    count = 0
    batch = []

    def flush():
        nonlocal count
        translations, scores = translator(batch, decoding)
        for row, row_scores in zip(translations, scores, strict=True):
            if decoding.n_best == 1:
                output.write(f"{row[0]}\n")
            else:
                for text, score in zip(row, row_scores, strict=True):
                    output.write(f"{count} ||| {text} ||| {score:.4f}\n")
            count += 1
        output.flush()
        batch.clear()
        if progress is not None:
            of = f"/{total}" if total else ""
            progress.write(f"\rtranslated {count}{of} lines")
            progress.flush()

    for line in lines:
        batch.append(line.rstrip("\n"))
        if len(batch) == batch_size:
            flush()
    if batch:
        flush()
    if progress is not None:
        progress.write("\n")
    return count
