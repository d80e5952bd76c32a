"""The exported parser (§6.3): raw sentences in, bracketed trees out.

`ParserModule` is the translator (`TranslatorModule`: source tokenizer, the
model, the traced beam searches) with the parsing run's target vocabulary
(`pipelines.SymbolTokenizer`) and the repairing de-linearization in
TensorFlow ops (`pipelines.delinearize_graph`), so TF Serving runs all of it.
Its signatures:

- `serving_default(text)`: the recorded search (the recipe's: beam 21,
  alpha 0.3, up to input + 300 for §6.3).
- `parse(text, beam_size, alpha, max_extra_length)`: per-request search.
- `parse_beam_K(text, alpha, max_extra_length)` for K = 1 ..
  `max_beam_size`: `parse` at beam size K, whose graph holds that one search
  (the translator's `translate_beam_K`); `Parser.from_export` calls these.
- `translate_ids(source_ids, ...)`: the search on ids, as the translator's;
  only without the bracket constraint (the constrained search needs each
  sentence's words, which ids do not give).

With the recipe's `constrain_brackets` (the parsing recipes' default), every
search runs under a `BracketConstraint` over the symbol vocabulary, with
each sentence's whitespace-separated word count: exactly one leaf per word
and balanced brackets, as `keras-transformer parse` searches.

The text signatures return `trees` (`tf.string` [B], words in the leaves,
`XX` tags unless the run predicts tags; an empty sentence gives `(TOP )`),
`scores` (float32 [B], the best hypothesis' length-penalised log
probability, 0 for an empty sentence) and `repairs` (int32 [B], the repairs
`delinearize` made). A sentence is its whitespace-separated words, invalid
UTF-8 replaced (U+FFFD); one longer than the model's limit is cut for the
search, and its words past the cut are attached under the root (counted as
repairs). The output is that of `keras-transformer parse` (tested).
"""

import tensorflow as tf

from pipelines import delinearize_graph
from savedmodels.translator_module import SCALAR_SPECS, TEXT_SPEC, TranslatorModule

PARSE_SCALARS = {k: SCALAR_SPECS[k] for k in ("beam_size", "alpha", "max_extra_length")}
PARSE_SPECS = [TEXT_SPEC, *PARSE_SCALARS.values()]


class ParserModule(TranslatorModule):
    """A parsing run's model, tokenizers and search as a servable module.

    Args:
        model: the parsing run's `Transformer` (its own target vocabulary).
        tokenizer: the source (subword) tokenizer.
        target_tokenizer: the target's `pipelines.SymbolTokenizer`.
        tags: bool. The run linearizes with POS tags instead of `XX`.
        constraint: a `BracketConstraint` or `None`. The search's bracket
            constraint over the symbol vocabulary, built by
            `keras_transformer.parsing.parser_constraint` (needed when the
            decoding's `constrain_brackets` is set).
        **kwargs: the other `TranslatorModule` arguments (`decoding`,
            `max_beam_size`, `max_extra_length_limit`, `max_input_length`).
    """

    def __init__(
        self, model, tokenizer, target_tokenizer, tags=False, constraint=None, **kwargs
    ):
        kwargs.setdefault("name", "parser")
        decoding = kwargs.get("decoding")
        if decoding is not None and decoding.constrain_brackets and not constraint:
            raise ValueError(
                "A search with `constrain_brackets` needs the run's "
                "`BracketConstraint` (`keras_transformer.parsing.parser_constraint`)."
                " Received: constraint=None"
            )
        self.constrained = constraint is not None
        super().__init__(
            model,
            tokenizer,
            target_tokenizer=target_tokenizer,
            constraint=constraint,
            **kwargs,
        )
        self.tags = bool(tags)
        # The text ends of the parse signatures, traced and stored once, as
        # the translator's (`_encode`, `_decode`).
        self._parse_inputs = tf.function(
            self._words_and_ids, input_signature=[TEXT_SPEC], autograph=False
        )
        self._trees = tf.function(self._delinearized, autograph=False)
        if self.constrained:
            # The id and text searches of the translator need each sentence's
            # words under the constraint: not saved (`tf.saved_model.save`
            # traces every `tf.function` attribute with a signature).
            del self.translate_ids, self.translate
        self.parse = tf.function(
            self._parse_text, input_signature=PARSE_SPECS, autograph=False
        )
        self.serving_default = tf.function(
            self._parse_default, input_signature=[TEXT_SPEC], autograph=False
        )

    def signatures(self):
        """`{name: concrete function}` for `tf.saved_model.save`."""
        signatures = {
            "serving_default": self.serving_default.get_concrete_function(),
            "parse": self.parse.get_concrete_function(),
            **self._beam_signatures("parse", self.parse_with_beam),
        }
        if not self.constrained:
            signatures["translate_ids"] = self.translate_ids.get_concrete_function()
        return signatures

    def _parse_default(self, text):
        return self.parse_with_beam(self.decoding.beam_size)(
            text,
            tf.constant(float(self.decoding.alpha)),
            tf.constant(self.decoding.max_extra_length),
        )

    def parse_with_beam(self, beam_size):
        """`parse` at one beam size (the `parse_beam_K` signature): a
        `tf.function` `(text, alpha, max_extra_length) -> {"trees",
        "scores", "repairs"}` whose graph holds that one search."""

        def run(text, alpha, max_extra_length):
            return self._parse_text(text, beam_size, alpha, max_extra_length)

        return self._beam_function("parse", beam_size, run, PARSE_SCALARS)

    def _parse_text(self, text, beam_size, alpha, max_extra_length):
        source_ids, words = self._parse_inputs(text)
        word_counts = (
            tf.cast(words.row_lengths(), tf.int32) if self.constrained else None
        )
        ids, scores = self._run(
            source_ids, beam_size, alpha, max_extra_length, 1, word_counts
        )
        trees, repairs = self._trees(ids[:, 0], words)  # the best hypothesis
        return {
            "trees": trees,
            "scores": scores[:, 0],
            "repairs": tf.reduce_sum(repairs, axis=-1),
        }

    def _words_and_ids(self, text):
        """`text` [B] -> `(source_ids [B, S], words [B, (W)])`: invalid UTF-8
        replaced, words split on whitespace, pieces of the words joined."""
        text = tf.strings.unicode_transcode(
            text, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD
        )
        words = tf.strings.split(text)  # [B, (W)], on whitespace
        sentences = tf.strings.reduce_join(words, axis=-1, separator=" ")
        return self._text_to_ids(sentences)[:, : self.max_input_length], words

    def _delinearized(self, ids, words):
        """The best hypotheses' ids [B, T] -> `(trees [B], repairs [B, k])`
        over `words` (`delinearize_graph`)."""
        symbols = tf.strings.split(self._target().detokenize(ids))  # [B, (S)]
        return delinearize_graph(symbols, words, tags=self.tags)
