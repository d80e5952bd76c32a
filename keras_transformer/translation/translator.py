"""`Translator`: raw strings in, translations out, from a run or an export.

Both sources run the exported search (`savedmodels.TranslatorModule`, the
cached beam search of §6.1 traced with the run's tokenizer): in-process from
a run directory's weights, with the arguments `export` uses
(`translator_arguments`), or an exported SavedModel's `translate_beam_K`
signature of the call's beam size (`translate` in an export without them).
So a run and its export translate a line alike (tested), and the search
settings a call may override are the serving signature's: `method` (`"beam"`
or `"greedy"`, a one-beam search), `beam_size`, `alpha`, `max_extra_length`
and, for n-best lists, `n_best`.

Examples:
    ```python
    from keras_transformer import Translator

    translator = Translator.from_run("keras-transformer-demo")
    translator.translate(["Open the file.", "Close the window."])
    translator.translate(["Open the file."], beam_size=1)  # greedy
    translator.translate_file("input.txt", "output.txt")
    ```
"""

import functools

from keras_transformer.translation.batch_defaults import BATCH_SIZE, BATCH_TOKENS
from keras_transformer.translation.line_files import check_output_path, count_lines
from keras_transformer.translation.line_streaming import ordered_outputs, stream_file
from keras_transformer.translation.text_search import (
    TextSearch,
    check_texts,
    greedy_as_one_beam,
)
from keras_transformer.validation import check_positive_int


class Translator(TextSearch):
    """Translates raw strings with a trained run or an exported SavedModel.

    Make one with `Translator.from_run(run_dir)` or
    `Translator.from_export(export_dir)`; both have the same methods and give
    the same translations for the same weights.

    A call takes any number of strings and searches them in batches sorted
    by length, each within `batch_tokens` (estimated subword tokens, padding
    included) and `batch_size` lines; the results come back in input order.
    An empty (or whitespace-only) string gives an empty translation, score 0,
    without a search. Search settings come from the run's recipe (or the
    export's record), `decoding`, and each call may override the
    `text_search.OVERRIDABLE` fields by keyword (`decoding_with`).

    Attributes: as `TextSearch` (`decoding`, `source`, the export's
    limits).
    """

    @classmethod
    def from_run(cls, run_dir, weights=None, compute_dtype="float32"):
        """The translator of a translation run's trained weights.

        Args:
            run_dir: str. The run directory (`keras-transformer train`).
            weights: str or `None`. A `.weights.h5` file; `None` takes the
                newest averaged weights, else the newest checkpoint.
            compute_dtype: str. `"float32"` (the default, the export's
                dtype), `"bfloat16"` (faster on CPUs with bfloat16 matmuls;
                `runs.COMPUTE_DTYPE_POLICIES`) or `"auto"` (bfloat16 on such
                a CPU, `resolve_compute_dtype`; the command line's default).

        Raises:
            ValueError: not a run directory, a parsing run, weights that do
                not fit the run (`UserError`, a `ValueError`).
            FileNotFoundError: the weights file is missing.
        """
        from keras_transformer.runs.loaded_run import load_run

        loaded = load_run(run_dir, weights, "translation", compute_dtype, seeded=False)
        return cls(_RunSearch(loaded), loaded.recipe.decoding, str(run_dir))

    @classmethod
    def from_export(cls, export_dir):
        """The translator of an exported SavedModel version
        (`<run_dir>/export/<version>`); needs only TensorFlow and
        tensorflow-text to run, as TF Serving.

        Args:
            export_dir: str. The export's version folder.

        Returns:
            A `Translator`.

        Raises:
            FileNotFoundError: the folder is missing.
            ValueError: not an export of this package, a damaged one, or a
                parsing export (no `translate` signature).
        """
        return cls._from_signature(
            export_dir,
            "translate",
            lambda signature: functools.partial(_translate_with, signature),
            "a parsing export? Load it with `Parser.from_export`",
        )

    def translate(
        self, texts, batch_tokens=BATCH_TOKENS, batch_size=BATCH_SIZE, **overrides
    ):
        """Translates strings; returns one translation (str) per input.

        Args:
            texts: list of str.
            batch_tokens: int. A batch's budget in estimated source tokens
                (UTF-8 bytes / 4), padding included. Defaults to
                `BATCH_TOKENS` (4096).
            batch_size: int. The most strings in one batch. Defaults to
                `BATCH_SIZE` (256).
            **overrides: `method`, `beam_size`, `alpha`, `max_extra_length`
                for this call (`decoding_with`).

        Returns:
            list of str, in the order of `texts`.

        Raises:
            ValueError: `texts` is empty, a str, or holds a non-str item; a
                bad override.
        """
        results = self._run(texts, 1, batch_tokens, batch_size, overrides)
        return [translations[0] for translations, _ in results]

    def translate_n_best(
        self,
        texts,
        n_best,
        batch_tokens=BATCH_TOKENS,
        batch_size=BATCH_SIZE,
        **overrides,
    ):
        """Translates strings into n-best lists.

        Args:
            texts: list of str.
            n_best: int. Hypotheses per input, at most the beam size.
            batch_tokens: int. As `translate`. Defaults to `BATCH_TOKENS`.
            batch_size: int. As `translate`. Defaults to `BATCH_SIZE`.
            **overrides: as `translate`.

        Returns:
            For each input, `n_best` `(translation, score)` pairs, best
            first (score: the length-penalised log probability, §6.1).

        Raises:
            ValueError: as `translate`, or an `n_best` that is not a positive
                int.
        """
        check_positive_int("n_best", n_best)
        results = self._run(texts, n_best, batch_tokens, batch_size, overrides)
        return [
            list(zip(translations, scores, strict=True))
            for translations, scores in results
        ]

    def translate_file(
        self,
        input_path,
        output_path="-",
        n_best=None,
        progress=None,
        batch_tokens=BATCH_TOKENS,
        batch_size=BATCH_SIZE,
        total=None,
        **overrides,
    ):
        """Translates a UTF-8 file (or stdin, `"-"`) line by line into a file
        (or stdout), streaming: chunks of lines sorted into batches, the
        output written in input order as it is done, to
        `<output_path>.partial` renamed when complete (a stopped run leaves
        the first lines translated). With `n_best` over 1, the Moses n-best
        format `index ||| translation ||| score`.

        Args:
            input_path: str. A file (`.gz` and `.xz` are decompressed), or
                `"-"` for stdin.
            output_path: str. A file, or `"-"` (the default) for stdout.
            n_best: int or `None`. Hypotheses per line (`None`: the run's or
                export's `n_best`).
            progress: a text stream for a progress line (e.g. `sys.stderr`),
                or `None` (the default) for none.
            batch_tokens: int. As `translate`. Defaults to `BATCH_TOKENS`.
            batch_size: int. As `translate`. Defaults to `BATCH_SIZE`.
            total: int or `None`. The input's number of lines when the
                caller has counted them (`count_lines`); `None` counts them
                here, checking each, before anything is written.
            **overrides: as `translate`.

        Returns:
            int, the number of lines translated.

        Raises:
            FileNotFoundError: the input file is missing.
            ValueError: invalid UTF-8 in the input (its line named), an
                output that is a folder or the input, a bad override.
        """
        decoding = self.decoding_with(n_best=n_best, **overrides)
        if total is None:  # a bad input is refused before anything is written
            total = count_lines(input_path)
        check_output_path(output_path, input_path)
        return stream_file(
            self.search,
            input_path,
            output_path,
            decoding=decoding,
            total=total,
            progress=progress,
            batch_tokens=batch_tokens,
            batch_size=batch_size,
        )

    def _run(self, texts, n_best, batch_tokens, batch_size, overrides):
        """`ordered_outputs` of `texts`, checked, as a list."""
        texts = check_texts(texts)
        decoding = self.decoding_with(n_best=n_best, **overrides)
        return list(
            ordered_outputs(
                self.search,
                texts,
                decoding,
                batch_size=batch_size,
                batch_tokens=batch_tokens,
            )
        )


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
    decoding = greedy_as_one_beam(decoding)
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


def _translate_with(signature, texts, decoding):
    """`(translations [B, n] str, scores [B, n])` of `texts` by an export's
    signature of the call's beam size (`ExportSignature`)."""
    return _decoded(signature(texts, decoding, n_best=decoding.n_best))


def _decoded(outputs):
    """A `translate` signature's outputs as `(translations [B, n] str,
    scores [B, n])` lists."""
    translations = [
        [t.decode("utf-8") for t in row] for row in outputs["translations"].numpy()
    ]
    return translations, outputs["scores"].numpy().tolist()


class _RunSearch:
    """The export's search, in-process, over a loaded run's weights: one
    `TranslatorModule` per largest beam and extra length asked so far, which
    traces the search of each beam size asked, once (`translate_with_beam`;
    the export's `translate` signature traces every beam size up to its
    largest)."""

    def __init__(self, loaded):
        self.loaded = loaded
        self.modules = []  # TranslatorModules, in the order made

    def __call__(self, texts, decoding):
        import tensorflow as tf

        decoding = greedy_as_one_beam(decoding)
        search = self._module(decoding).translate_with_beam(decoding.beam_size)
        return _decoded(
            search(
                tf.constant(texts, tf.string),
                tf.constant(decoding.alpha, tf.float32),
                tf.constant(decoding.max_extra_length, tf.int32),
                tf.constant(decoding.n_best, tf.int32),
            )
        )

    def _module(self, decoding):
        """A module whose searches reach `decoding`'s beam and extra length
        (its decoding buffers are as long as its `max_extra_length_limit`
        allows): built with the export's arguments (`translator_arguments`),
        `decoding` as its default."""
        from savedmodels import TranslatorModule

        for module in self.modules:
            if (
                module.max_beam_size >= decoding.beam_size
                and module.max_extra_length_limit >= decoding.max_extra_length
            ):
                return module
        recipe = self.loaded.recipe
        arguments = translator_arguments(recipe, decoding, decoding.beam_size)
        module = TranslatorModule(self.loaded.model, self.loaded.tokenizer, **arguments)
        self.modules.append(module)
        return module
