"""`keras-transformer parse`: sentences in, bracketed trees out, streaming
(`cli.line_streaming`, as `translate`), from a parsing run (its search
compiled once per process) or its export's `parse` signature."""

import pipelines
from keras_transformer.cli.compute_dtypes import decodes_with_xla
from keras_transformer.cli.parse import load_parser, parse_sentences, parser_search
from keras_transformer.cli.user_error import UserError
from keras_transformer.validation import check_one_of

# A parse batch's budget: sentences times the longest sentence's
# `tree_length_limit` (3n + 21 symbols for n words), the steps and buffer a
# search step costs in proportion to (BUILD_NOTES.md, "Parsing speed").
PARSE_BATCH_SYMBOLS = 4096

# The output of an empty line: the root over no words.
EMPTY_TREE = f"({pipelines.ROOT_LABEL} )"


def parse_cost(text):
    """The batch budget's measure of a line: the most symbols its tree may
    take under the bracket constraint (`tree_length_limit` of its
    whitespace-separated words)."""
    from keras_transformer.decoding.bracket_constraint import tree_length_limit

    return int(tree_length_limit(len(text.split())))


# `search="auto"`: inputs of more lines than this (or of an unknown count,
# stdin) compile each batch shape with XLA, whose steps are faster; shorter
# ones trace one graph-mode search for every shape, which compiles once
# (BUILD_NOTES.md, "Parsing speed": with `gum_parsing`'s model the two meet
# at about 2,500 sentences at beam 4 and 6,300 greedy on the 2-core machine).
XLA_FROM_LINES = 2000

SEARCHES = ("auto", "xla", "graph")


def search_mode(search, model, lines):
    """`"xla"` or `"graph"`: `search` itself, or for `"auto"`, XLA for a
    float32 model (`decodes_with_xla`) and more than `XLA_FROM_LINES` (or an
    unknown number of) `lines`."""
    check_one_of("search", search, SEARCHES)
    if search != "auto":
        return search
    long = lines is None or lines > XLA_FROM_LINES
    return "xla" if decodes_with_xla(model) and long else "graph"


class _RunParser:
    """`parse_file`'s parser from a run's weights: the search compiled once
    for the process (`parser_search`): with XLA, each batch shape compiles
    once however many batches meet it; in graph mode, one trace for every
    shape (`search_mode`). Counts the repairs and the lines cut to the
    model's positions (`cut`), naming each on `notices`."""

    def __init__(
        self, run_dir, weights, overrides, *, notices, compute_dtype, search, lines
    ):
        recipe, tokenizer, target, model, _, decoding = load_parser(
            run_dir, weights, overrides, compute_dtype
        )
        self.parts = (recipe, tokenizer, target, model)
        self.decoding = decoding
        self.notices = notices
        self.mode = search_mode(search, model, lines)
        xla = self.mode == "xla"
        self.search = parser_search(
            recipe, target, model, decoding, jit_compile=xla, dynamic_shapes=not xla
        )
        self.repairs = 0
        self.cut = 0

    def __call__(self, texts, decoding):
        recipe, tokenizer, target, model = self.parts
        self._count_cut(texts)
        trees, repairs = parse_sentences(
            recipe,
            tokenizer,
            target,
            model,
            texts,
            decoding,
            batch_size=len(texts),
            translate_fn=self.search,
        )
        self.repairs += sum(counts.total for counts in repairs)
        return [[str(tree)] for tree in trees], [[None]] * len(trees)

    def _count_cut(self, texts):
        """Counts (and names) the texts whose pieces the model cannot read
        whole: over `max_train_length - 1` pieces (eos takes a position)."""
        limit = self.parts[0].max_train_length - 1
        # A piece holds a character at least, and a word may add one.
        long = [t for t in texts if len(t) + len(t.split()) > limit]
        if not long:
            return
        lengths = pipelines.encode_sources(self.parts[1], long).row_lengths() - 1
        for text, length in zip(long, lengths.numpy().tolist(), strict=True):
            if length > limit:
                self.cut += 1
                if self.notices is not None:
                    words = text.split()
                    self.notices.write(
                        f"parse: a line of {len(words)} words ({length} pieces, "
                        f"starting {' '.join(words[:5])!r}) is over the model's "
                        f"{limit + 1} source positions: the search reads its "
                        f"first {limit} pieces, and its tree still covers "
                        "every word\n"
                    )


class _ExportParser:
    """`parse_file`'s parser from an export's `parse` signature; counts the
    repairs it reports (`cut` is not known without the tokenizer)."""

    def __init__(self, export_dir, overrides=None):
        from keras_transformer.cli.option_checks import export_decoding
        from keras_transformer.cli.saved_model_files import load_saved_model

        try:
            self.signature = load_saved_model(export_dir).signatures["parse"]
        except KeyError:
            raise UserError(
                f"{export_dir} has no `parse` signature: not a parsing export."
            ) from None
        self.decoding = export_decoding(export_dir).with_overrides(**(overrides or {}))
        self.repairs = 0
        self.cut = None

    def __call__(self, texts, decoding):
        import tensorflow as tf

        # Greedy is the export's one-beam search (its greedy search under the
        # bracket constraint, `one_beam_as_greedy`).
        beam_size = 1 if decoding.method == "greedy" else decoding.beam_size
        outputs = self.signature(
            text=tf.constant(texts, tf.string),
            beam_size=tf.constant(beam_size, tf.int32),
            alpha=tf.constant(decoding.alpha, tf.float32),
            max_extra_length=tf.constant(decoding.max_extra_length, tf.int32),
        )
        self.repairs += int(outputs["repairs"].numpy().sum())
        trees = [[tree.decode("utf-8")] for tree in outputs["trees"].numpy()]
        return trees, [[score] for score in outputs["scores"].numpy().tolist()]


def load_line_parser(
    run_dir=None,
    export_dir=None,
    weights=None,
    overrides=None,
    notices=None,
    compute_dtype=None,
    search="auto",
    lines=None,
):
    """The parser of a parsing run or of its export, for `parse_file`.

    Args:
        run_dir, export_dir: exactly one of them.
        weights: with `run_dir`, a weights file (default: the newest averaged,
            else the newest checkpoint).
        overrides: dict or `None`. `DecodingConfig` fields over the run's
            recipe's, or the export's recorded search.
        notices: a text stream for a line per sentence cut to the model's
            positions (`run_dir` only), or `None`.
        compute_dtype: with `run_dir`, `"float32"` (`None`: the default) or
            `"bfloat16"`, as `load_trained_model`; an export computes in the
            dtype it was exported with.
        search: with `run_dir`, `"xla"` (each batch shape compiled by XLA:
            faster steps), `"graph"` (one graph-mode trace for every shape:
            compiles once) or `"auto"` (the default: `search_mode` chooses by
            the dtype and `lines`).
        lines: int or `None`. The number of lines to parse, if known.

    Returns:
        `(parser, decoding)`: `parser(texts, decoding) -> (trees [B, 1] str,
        scores [B, 1])`, as `translate_lines` calls a translator, with
        `parser.repairs` (repairs so far), `parser.cut` (sentences cut so
        far; `None` for an export) and, from a run, `parser.mode` (`"xla"` or
        `"graph"`); and the `DecodingConfig` it searches with.
    """
    from keras_transformer.cli.translate import check_export_compute_dtype

    if (run_dir is None) == (export_dir is None):
        raise UserError("Give exactly one of --run-dir and --export.")
    check_export_compute_dtype(export_dir, compute_dtype)
    if export_dir is not None:
        parser = _ExportParser(export_dir, overrides)
    else:
        parser = _RunParser(
            run_dir,
            weights,
            overrides,
            notices=notices,
            compute_dtype=compute_dtype,
            search=search,
            lines=lines,
        )
    return parser, parser.decoding


def parse_file(parser, input_path="-", output_path="-", decoding=None, **options):
    """`keras-transformer parse`: one bracketed tree per input line, streamed
    as `translate_file` streams translations.

    The input is read in chunks, each sorted by sentence length into batches
    of at most `batch_size` sentences whose padded cost (sentences times the
    longest one's `parse_cost`) stays within `batch_tokens` symbols, a power
    of two of sentences each (few shapes for the search to compile); trees
    are written in input order as soon as every line before them is done,
    to `<output_path>.partial`, renamed to `output_path` at the end (a killed
    run leaves the finished lines there, and nothing under the final name).
    An empty line gives `(TOP )`; invalid UTF-8 is read with replacement
    (U+FFFD), as the export reads its requests.

    Args:
        parser, decoding: from `load_line_parser`.
        input_path: str. Input file; `"-"` for stdin.
        output_path: str. Output file; `"-"` for stdout.
        **options: `total`, `progress` (a stream for the progress line with
            sentences/s), `batch_size` (default 64), `batch_tokens` (default
            `PARSE_BATCH_SYMBOLS`), `powers_of_two` (default `True`),
            `chunk_size`, as `translate_file`.

    Returns:
        The number of lines parsed.
    """
    from keras_transformer.cli.line_streaming import translate_file

    options.setdefault("batch_size", 64)
    options.setdefault("batch_tokens", PARSE_BATCH_SYMBOLS)
    options.setdefault("powers_of_two", True)
    return translate_file(
        parser,
        input_path,
        output_path,
        decoding=decoding,
        errors="replace",
        length=parse_cost,
        empty_output=EMPTY_TREE,
        verb="parsed",
        **options,
    )
