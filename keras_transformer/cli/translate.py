"""`keras-transformer translate`: lines in, translations out (n-best optional)."""

import sys

from keras_transformer.cli.user_error import UserError


def load_translator(run_dir=None, export_dir=None, weights=None, max_beam_size=4):
    """A `fn(texts, beam_size, alpha, max_extra_length, n_best) -> (translations
    [B, n] str, scores [B, n])` from a run directory or an exported SavedModel.

    Both run the exported search (`savedmodels.TranslatorModule`): in-process
    from a run's weights, or the SavedModel's `translate` signature.
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
    else:
        from keras_transformer.cli.trained_model import load_trained_model
        from savedmodels import TranslatorModule

        _, tokenizer, model, _ = load_trained_model(run_dir, weights)
        module = TranslatorModule(
            model, tokenizer, beam_size=max_beam_size, max_beam_size=max_beam_size
        )
        signature = module.translate

    def run(texts, beam_size, alpha, max_extra_length, n_best):
        outputs = signature(
            text=tf.constant(texts, tf.string),
            beam_size=tf.constant(beam_size, tf.int32),
            alpha=tf.constant(alpha, tf.float32),
            max_extra_length=tf.constant(max_extra_length, tf.int32),
            n_best=tf.constant(n_best, tf.int32),
        )
        translations = [
            [t.decode("utf-8") for t in row] for row in outputs["translations"].numpy()
        ]
        return translations, outputs["scores"].numpy().tolist()

    return run


def translate_lines(
    translator,
    lines,
    output=None,
    beam_size=4,
    alpha=0.6,
    max_extra_length=50,
    n_best=1,
    batch_size=32,
    total=None,
    progress=None,
):
    """Translates an iterable of lines in batches, writing as it goes.

    With `n_best == 1` one translation per line; otherwise `n_best` lines per
    input in the Moses n-best format `index ||| translation ||| score`. An
    empty line gives an empty translation (score 0).

    Args:
        translator: from `load_translator`.
        lines: iterable of str (newlines are stripped).
        output: a text stream. Defaults to `sys.stdout` at call time.
        total: int or `None`. Number of lines, for the progress display.
        progress: a text stream for progress (e.g. stderr) or `None`.

    Returns:
        The number of lines translated.
    """
    if n_best > beam_size:
        raise UserError(
            f"--n-best cannot exceed --beam-size. Received: n_best={n_best}, "
            f"beam_size={beam_size}"
        )
    output = sys.stdout if output is None else output
    count = 0
    batch = []

    def flush():
        nonlocal count
        translations, scores = translator(
            batch, beam_size, alpha, max_extra_length, n_best
        )
        for row, row_scores in zip(translations, scores, strict=True):
            if n_best == 1:
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
