"""`Parser`: English sentences in, bracketed trees out (§6.3), from a parsing
run or its export.

From a run, the search runs in-process (`parse_search`), compiled once per
search setting for the parser's life; from an export, its `parse` signature
runs the same constrained search and de-linearization in TensorFlow ops. Both
stream as `Translator` does (`translation.line_streaming`): length-sorted
batches within a budget of tree symbols, outputs in input order
(`tree_streaming`).

Examples:
    ```python
    from keras_transformer import Parser

    parser = Parser.from_run("keras-transformer-parsing-demo")
    trees = parser.parse(["The cat sat on the mat ."])
    print(trees[0])  # (TOP (S (NP (XX The) (XX cat)) (VP ...)))
    parser.parse_file("sentences.txt", "trees.txt")
    ```
"""

import pipelines
from keras_transformer.decoding.bracket_constraint import one_beam_as_greedy
from keras_transformer.parsing.parse_search import parse_sentences, parser_search
from keras_transformer.parsing.tree_streaming import (
    stream_trees,
    tree_batching,
)
from keras_transformer.runs.compute_dtypes import decodes_with_xla
from keras_transformer.translation.batch_defaults import (
    PARSE_BATCH_SIZE,
)
from keras_transformer.translation.line_files import check_output_path, count_lines
from keras_transformer.translation.line_streaming import ordered_outputs
from keras_transformer.translation.text_search import (
    TextSearch,
    check_texts,
)
from keras_transformer.validation import check_one_of

# `search="auto"`: inputs of more lines than this (or of an unknown count,
# stdin) compile each batch shape with XLA, whose steps are faster; shorter
# ones run one graph-mode search for every shape, which compiles once
# (docs/experiment-log.md, "Parsing speed", has where the two meet with
# `gum_parsing`'s model when XLA compiles every shape; from the compile
# cache, they meet earlier).
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


class Parser(TextSearch):
    """Parses sentences into trees with a parsing run or its export.

    Make one with `Parser.from_run(run_dir)` or `Parser.from_export(
    export_dir)`. A sentence is its whitespace-separated words (tokenized
    text, as the treebank's); the tree covers exactly those words, its
    leaves tagged `XX` unless the run predicts tags. An empty sentence gives
    `(TOP )`. Search settings come from the run's recipe (§6.3: beam 21,
    alpha 0.3, input length + 300) or the export's record, and each call may
    override `method`, `beam_size`, `alpha` and `max_extra_length` by
    keyword (`decoding_with`).

    Attributes:
        decoding: the `DecodingConfig` a call uses where it sets nothing.
        repairs: int. Repairs `delinearize` made to the model's output so
            far (an invalid tree made valid).
        cut: int or `None`. Sentences so far whose pieces were over the
            model's source positions (their first pieces were read; `None`
            from an export, which does not report it).
        mode: `"xla"` or `"graph"` from a run (`search_mode`), `None` from
            an export.
    """

    @classmethod
    def from_run(
        cls,
        run_dir,
        weights=None,
        compute_dtype="float32",
        search="auto",
        lines=None,
        notices=None,
        compile_cache="auto",
    ):
        """The parser of a parsing run's trained weights.

        Args:
            run_dir: str. The parsing run's directory.
            weights: str or `None`. A `.weights.h5` file; `None` takes the
                newest averaged weights, else the newest checkpoint.
            compute_dtype: str. `"float32"` (the default), `"bfloat16"` or
                `"auto"` (bfloat16 on a CPU with bfloat16 matmuls,
                `resolve_compute_dtype`; the command line's default).
            search: `"xla"` (each batch shape compiled by XLA: faster
                steps), `"graph"` (one graph-mode search for every shape:
                compiles once) or `"auto"` (the default: `search_mode`
                chooses by the dtype and `lines`).
            lines: int or `None`. How many sentences will be parsed, if
                known (for the `"auto"` choices).
            notices: a text stream for one line per sentence cut to the
                model's source positions, and for the compile cache's
                notices, or `None`.
            compile_cache: where XLA keeps its compilations for the next
                process (`compile_cache.use_decoding_cache`): `"auto"` (the
                default: `xla/` in the package's cache folder,
                `$KERAS_TRANSFORMER_CACHE`, `$XDG_CACHE_HOME/keras-transformer`
                or `~/.cache/keras-transformer`), a folder, or `None`. Used
                where the search may be XLA's, and only if no TensorFlow
                function has run in this process yet; it sets `TF_XLA_FLAGS`
                for the rest of the process (and its children).

        Raises:
            ValueError: not a run directory, a translation run, weights that
                do not fit the run.
            FileNotFoundError: the weights file is missing.
        """
        from keras_transformer.runs.compile_cache import use_decoding_cache
        from keras_transformer.runs.loaded_run import load_run

        check_one_of("search", search, SEARCHES)
        short = search == "auto" and lines is not None and lines <= XLA_FROM_LINES
        if not (search == "graph" or short or compute_dtype == "bfloat16"):
            # Before anything asks TensorFlow for its devices (`auto`), which
            # reads the XLA flags; harmless if the search runs in graph mode.
            use_decoding_cache(compile_cache, notices)
        loaded = load_run(run_dir, weights, "parsing", compute_dtype, seeded=False)
        mode = search_mode(search, loaded.model, lines)
        run_search = _RunSearch(loaded, mode, notices)
        return cls(run_search, loaded.recipe.decoding, str(run_dir))

    @classmethod
    def from_export(cls, export_dir):
        """The parser of a parsing run's exported SavedModel version.

        Args:
            export_dir: str. The export's version folder
                (`<run_dir>/export/<version>`).

        Returns:
            A `Parser`.

        Raises:
            FileNotFoundError: the folder is missing.
            ValueError: not an export of this package, a damaged one, or a
                translation export (no `parse` signature).
        """
        return cls._from_signature(
            export_dir,
            "parse",
            _ExportSearch,
            "not a parsing export (load a translation export with "
            "`Translator.from_export`)",
        )

    @property
    def repairs(self):
        return getattr(self._search_fn, "repairs", None)

    @property
    def cut(self):
        return getattr(self._search_fn, "cut", None)

    @property
    def mode(self):
        return getattr(self._search_fn, "mode", None)

    def decoding_with(self, n_best=None, **overrides):
        """As `TextSearch.decoding_with`; one tree per sentence, and a
        constrained one-beam search is greedy search (`one_beam_as_greedy`)."""
        if n_best not in (None, 1):
            raise ValueError(f"A parser returns one tree. Received: n_best={n_best}")
        decoding = super().decoding_with(n_best=1, **overrides)
        return one_beam_as_greedy(decoding)

    def parse(
        self, sentences, batch_tokens=None, batch_size=PARSE_BATCH_SIZE, **overrides
    ):
        """Parses sentences; returns one `pipelines.Tree` per sentence.

        Args:
            sentences: list of str, words separated by spaces.
            batch_tokens: int or `None`. A batch's budget in tree symbols,
                padding included: sentences times the longest one's bound
                (3 x words + 21). `None`: `PARSE_BATCH_SYMBOLS`.
            batch_size: int. The most sentences in one batch. Defaults to
                `PARSE_BATCH_SIZE` (64).
            **overrides: `method`, `beam_size`, `alpha`, `max_extra_length`
                for this call.

        Returns:
            list of `pipelines.Tree` (`str(tree)` gives the brackets), in the
            order of `sentences`.

        Raises:
            ValueError: `sentences` is empty, a str, or holds a non-str item;
                a bad override.
        """
        sentences = check_texts(sentences, "sentences")
        decoding = self.decoding_with(**overrides)
        outputs = ordered_outputs(
            self.search, sentences, decoding, **tree_batching(batch_tokens, batch_size)
        )
        return [
            pipelines.read_tree_over_words(trees[0], sentence.split())
            for (trees, _), sentence in zip(outputs, sentences, strict=True)
        ]

    def parse_file(
        self,
        input_path,
        output_path="-",
        progress=None,
        batch_tokens=None,
        batch_size=PARSE_BATCH_SIZE,
        total=None,
        **overrides,
    ):
        """Parses a file (or stdin, `"-"`) line by line into one bracketed
        tree a line in a file (or stdout), streaming (`stream_trees`).

        Args:
            input_path: str. A file, or `"-"` for stdin (as
                `Translator.translate_file`).
            output_path: str. A file, or `"-"` (the default) for stdout.
            progress: a text stream for a progress line (e.g. `sys.stderr`),
                or `None` (the default) for none.
            batch_tokens: int or `None`. As `parse`.
            batch_size: int. As `parse`. Defaults to `PARSE_BATCH_SIZE`.
            total: int or `None`. The input's number of lines when the
                caller has counted them (`count_lines`); `None` counts them
                here, checking each, before anything is written.
            **overrides: as `parse`.

        Returns:
            int, the number of lines parsed.

        Raises:
            FileNotFoundError: the input file is missing.
            ValueError: as `parse` and `Translator.translate_file`.
        """
        decoding = self.decoding_with(**overrides)
        if total is None:
            total = count_lines(input_path, errors="replace")
        check_output_path(output_path, input_path)
        return stream_trees(
            self.search,
            input_path,
            output_path,
            decoding,
            batch_tokens,
            batch_size,
            total=total,
            progress=progress,
        )


class _RunSearch:
    """A parsing run's search, in-process: traced once per decoding setting
    for the parser's life (`parser_search`) for every batch shape: with XLA,
    each shape compiles once however many batches meet it (or loads from the
    compile cache); in graph mode, the one graph runs every shape
    (`search_mode`). Counts the repairs and the lines cut to the
    model's positions (`cut`), naming each on `notices`."""

    def __init__(self, loaded, mode, notices):
        self.loaded = loaded
        self.notices = notices
        self.mode = mode
        self.searches = {}  # DecodingConfig -> compiled search
        self.repairs = 0
        self.cut = 0

    def __call__(self, texts, decoding):
        self._count_cut(texts)
        if decoding not in self.searches:
            # One trace for every shape; XLA then compiles each shape from it.
            self.searches[decoding] = parser_search(
                self.loaded,
                decoding,
                jit_compile=self.mode == "xla",
                dynamic_shapes=True,
            )
        trees, repairs = parse_sentences(
            self.loaded,
            texts,
            decoding,
            batch_size=len(texts),
            translate_fn=self.searches[decoding],
        )
        self.repairs += sum(counts.total for counts in repairs)
        return [[str(tree)] for tree in trees], [[None]] * len(trees)

    def _count_cut(self, texts):
        """Counts (and names) the texts whose pieces the model cannot read
        whole: over `max_train_length - 1` pieces (eos takes a position)."""
        limit = self.loaded.recipe.max_train_length - 1
        # A piece holds a character at least, and a word may add one.
        long = [t for t in texts if len(t) + len(t.split()) > limit]
        if not long:
            return
        lengths = (
            pipelines.encode_sources(self.loaded.tokenizer, long).row_lengths() - 1
        )
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


class _ExportSearch:
    """The search of an export's `parse_beam_K` signature of the call's beam
    size (`parse` in an export without them, `ExportSignature`); counts the
    repairs it reports (`cut` is not known without the tokenizer)."""

    def __init__(self, signature):
        self.signature = signature
        self.repairs = 0
        self.cut = None

    def __call__(self, texts, decoding):
        # Greedy is the export's one-beam search (its greedy search under the
        # bracket constraint, `one_beam_as_greedy`).
        outputs = self.signature(texts, decoding)
        self.repairs += int(outputs["repairs"].numpy().sum())
        trees = [[tree.decode("utf-8")] for tree in outputs["trees"].numpy()]
        return trees, [[score] for score in outputs["scores"].numpy().tolist()]
