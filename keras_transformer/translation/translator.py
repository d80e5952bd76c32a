"""`Translator`: raw strings in, translations out, from a run or an export.

Both sources run the exported search (`savedmodels.TranslatorModule`, the
cached beam search of §6.1 traced with the run's tokenizer): in-process from
a run directory's weights, with the arguments `export` uses
(`translator_arguments`), or an exported SavedModel's `translate` signature.
So a run and its export translate a line alike (tested), and the search
settings a call may override are the serving signature's: `method` (`"beam"`
or `"greedy"`, a one-beam search), `beam_size`, `alpha`, `max_extra_length`
and, for n-best lists, `n_best`.

Example:

```python
from keras_transformer import Translator

translator = Translator.from_run("keras-transformer-demo")
translator.translate(["Open the file.", "Close the window."])
translator.translate(["Open the file."], beam_size=1)  # greedy
translator.translate_file("input.txt", "output.txt")
```
"""

import dataclasses

from keras_transformer.runs.user_error import UserError
from keras_transformer.translation.line_streaming import (
    check_output_path,
    count_lines,
    estimated_tokens,
    ordered_outputs,
    stream_file,
)
from keras_transformer.validation import check_one_of, check_positive_int

# The `DecodingConfig` fields a call may set, as the serving signature takes
# them (`n_best` only where a call returns n-best lists).
OVERRIDABLE = ("method", "beam_size", "alpha", "max_extra_length")
METHODS = ("beam", "greedy")


class Translator:
    """Translates raw strings with a trained run or an exported SavedModel.

    Make one with `Translator.from_run(run_dir)` or
    `Translator.from_export(export_dir)`; both have the same methods and give
    the same translations for the same weights.

    A call takes any number of strings and searches them in batches sorted
    by length, each within `batch_tokens` (estimated subword tokens, padding
    included) and `batch_size` lines; the results come back in input order.
    An empty (or whitespace-only) string gives an empty translation, score 0,
    without a search. Search settings come from the run's recipe (or the
    export's record), `decoding`, and each call may override `OVERRIDABLE`
    fields by keyword.

    Attributes:
        decoding: the `DecodingConfig` a call uses where it sets nothing.
        source: str. The run directory or export it was loaded from.
        max_beam_size: int or `None`. The largest beam an export accepts
            (`None`: a run's, any beam).
        max_extra_length_limit: int or `None`. The export's largest
            `max_extra_length` (`None`: a run's, any).
    """

    def __init__(
        self,
        search_fn,
        decoding,
        source,
        max_beam_size=None,
        max_extra_length_limit=None,
    ):
        self._search_fn = search_fn
        self.decoding = decoding
        self.source = source
        self.max_beam_size = max_beam_size
        self.max_extra_length_limit = max_extra_length_limit

    @classmethod
    def from_run(cls, run_dir, weights=None, compute_dtype="float32"):
        """The translator of a translation run's trained weights.

        Args:
            run_dir: str. The run directory (`keras-transformer train`).
            weights: str or `None`. A `.weights.h5` file; `None` takes the
                newest averaged weights, else the newest checkpoint.
            compute_dtype: str. `"float32"` (the default) or `"bfloat16"`
                (faster on CPUs with AMX; `runs.COMPUTE_DTYPE_POLICIES`).

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

        Raises:
            FileNotFoundError: the folder is missing.
            ValueError: not an export of this package, a damaged one, or a
                parsing export (no `translate` signature).
        """
        return cls._from_signature(
            export_dir,
            "translate",
            _ExportSearch,
            "a parsing export? Load it with `Parser.from_export`",
        )

    @classmethod
    def _from_signature(cls, export_dir, name, search_class, hint):
        """An instance over the export's signature `name` (refused, with
        `hint`, when the export has none), its decoding and limits from the
        export's record; `search_class(signature)` is the search."""
        from savedmodels.export_record import export_decoding, export_record
        from savedmodels.saved_model_files import load_saved_model

        decoding = export_decoding(export_dir)
        signature = load_saved_model(export_dir).signatures.get(name)
        if signature is None:
            raise UserError(
                f"{export_dir} has no `{name}` signature: {hint}. "
                f"Received: export_dir={export_dir!r}"
            )
        limits = export_record(export_dir)[0].get("decoding") or {}
        return cls(
            search_class(signature),
            decoding,
            str(export_dir),
            max_beam_size=limits.get("max_beam_size"),
            max_extra_length_limit=limits.get("max_extra_length_limit"),
        )

    def decoding_with(self, n_best=None, **overrides):
        """`decoding` with `overrides` (`OVERRIDABLE` fields; `None` keeps
        the default) and `n_best`, checked against what the search takes.

        Raises:
            ValueError: an unknown field, a method other than `"beam"` or
                `"greedy"`, a beam size or extra length over the export's
                limits, more hypotheses than beams.
        """
        unknown = sorted(set(overrides) - set(OVERRIDABLE))
        if unknown:
            raise ValueError(
                f"A call may set only {', '.join(OVERRIDABLE)} (and n_best). "
                f"Received: {', '.join(f'{k}={overrides[k]!r}' for k in unknown)}"
            )
        values = {k: v for k, v in overrides.items() if v is not None}
        method = values.get("method", self.decoding.method)
        check_one_of("method", method, METHODS)
        beam_size = values.get("beam_size", self.decoding.beam_size)
        hypotheses = beam_size if method == "beam" else 1
        if n_best is None:  # the run's or export's, within this search's
            n_best = min(self.decoding.n_best, hypotheses)
        if n_best > hypotheses:
            raise ValueError(
                f"n_best cannot exceed the hypotheses of the search ({hypotheses}: "
                f"the beam size, 1 for greedy). Received: n_best={n_best}"
            )
        decoding = self.decoding.with_overrides(**values, n_best=n_best)
        for name, limit in (
            ("beam_size", self.max_beam_size),
            ("max_extra_length", self.max_extra_length_limit),
        ):
            value = getattr(decoding, name)
            if limit is not None and value > limit:
                raise ValueError(
                    f"{name} {value} is over the export's limit {limit} "
                    f"({self.source}); export again with a larger one. "
                    f"Received: {name}={value}"
                )
        return decoding

    def search(self, texts, decoding):
        """One batch: `(translations [B, n], scores [B, n])` of `texts` (a
        list of non-empty str) under `decoding`, n its `n_best`. The search
        function of `line_streaming` (`stream_lines`, `ordered_outputs`)."""
        return self._search_fn(texts, _one_beam_greedy(decoding))

    def translate(self, texts, batch_tokens=4096, batch_size=256, **overrides):
        """Translates strings; returns one translation (str) per input.

        Args:
            texts: list of str.
            batch_tokens: int. A batch's budget in estimated source tokens
                (UTF-8 bytes / 4), padding included. Defaults to `4096`.
            batch_size: int. The most strings in one batch. Defaults to
                `256`.
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
        self, texts, n_best, batch_tokens=4096, batch_size=256, **overrides
    ):
        """Translates strings into n-best lists.

        Returns:
            For each input, `n_best` `(translation, score)` pairs, best
            first (score: the length-penalised log probability, §6.1).

        Args, Raises: as `translate`; `n_best` is at most the beam size.
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
        batch_tokens=4096,
        batch_size=256,
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
            batch_tokens, batch_size, **overrides: as `translate`.

        Returns:
            int, the number of lines translated.

        Raises:
            FileNotFoundError: the input file is missing.
            ValueError: invalid UTF-8 in the input (its line named), an
                output that is a folder or the input, a bad override.
        """
        decoding = self.decoding_with(n_best=n_best, **overrides)
        total = count_lines(input_path)  # refused before anything is written
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
                length=estimated_tokens,
            )
        )


def check_texts(texts, what="texts"):
    """`texts` as a list, refused when it is a str, empty, or holds an item
    that is not a str; a line break inside an item is kept (the search
    reads it as a space)."""
    if isinstance(texts, (str, bytes)):
        raise ValueError(
            f"Expected a list of strings, not one string. Received: "
            f"{what}={texts!r:.80}"
        )
    try:
        texts = list(texts)
    except TypeError:
        raise ValueError(
            f"Expected a list of strings. Received: {what}={texts!r:.80}"
        ) from None
    if not texts:
        raise ValueError(f"Expected at least one string. Received: {what}=[]")
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValueError(
                f"Expected a list of strings; item {index} is a "
                f"{type(text).__name__}. Received: {what}[{index}]={text!r:.80}"
            )
    return texts


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


def _one_beam_greedy(decoding):
    """Greedy as the export runs it: beam search with one beam
    (`translator_arguments`)."""
    if decoding.method == "greedy":
        return dataclasses.replace(decoding, method="beam", beam_size=1)
    return decoding


def _call_signature(signature, texts, decoding, **extra):
    """Calls a `translate`-like signature with `decoding`'s scalars."""
    import tensorflow as tf

    return signature(
        text=tf.constant(texts, tf.string),
        beam_size=tf.constant(decoding.beam_size, tf.int32),
        alpha=tf.constant(decoding.alpha, tf.float32),
        max_extra_length=tf.constant(decoding.max_extra_length, tf.int32),
        **{k: tf.constant(v, tf.int32) for k, v in extra.items()},
    )


def _decoded(outputs):
    """`(translations [B, n] str, scores [B, n])` of a signature's outputs."""
    translations = [
        [t.decode("utf-8") for t in row] for row in outputs["translations"].numpy()
    ]
    return translations, outputs["scores"].numpy().tolist()


class _ExportSearch:
    """The search of an export's `translate` signature."""

    def __init__(self, signature):
        self.signature = signature

    def __call__(self, texts, decoding):
        return _decoded(
            _call_signature(self.signature, texts, decoding, n_best=decoding.n_best)
        )


class _RunSearch:
    """The export's search, in-process, over a loaded run's weights: one
    `TranslatorModule` per largest beam asked so far (its search traces one
    branch per beam size up to it, so a small beam costs no wide trace)."""

    def __init__(self, loaded):
        self.loaded = loaded
        self.modules = {}  # max_beam_size -> TranslatorModule

    def __call__(self, texts, decoding):
        return _decoded(
            _call_signature(
                self._module(decoding).translate,
                texts,
                decoding,
                n_best=decoding.n_best,
            )
        )

    def _module(self, decoding):
        from savedmodels import TranslatorModule

        for size, module in self.modules.items():
            if size >= decoding.beam_size:
                return module
        recipe = self.loaded.recipe
        base = dataclasses.replace(recipe.decoding, n_best=1)
        arguments = translator_arguments(
            recipe, _one_beam_greedy(base), decoding.beam_size
        )
        arguments["decoding"] = dataclasses.replace(
            arguments["decoding"],
            beam_size=min(arguments["decoding"].beam_size, decoding.beam_size),
        )
        module = TranslatorModule(self.loaded.model, self.loaded.tokenizer, **arguments)
        self.modules[decoding.beam_size] = module
        return module
