"""The exported translator: tokenizer + model + cached beam search in one graph.

`TranslatorModule` is a `tf.Module` that `tf.saved_model.save` writes as a
self-contained SavedModel: raw `tf.string` sentences in, n-best translations and
scores out. The SentencePiece model is embedded in the graph (it is an attribute
of tensorflow-text's `SentencepieceOp`, recreated on load), the model's weights
are saved variables, and the search is `keras_transformer.decoding.translate`
traced into the graph. Loading it needs only `tensorflow` and
`tensorflow_text` (for the SentencePiece ops), not this repository.

Signatures (method name `tensorflow/serving/predict`):

- `serving_default(text [B] string) -> {translations [B, n] string, scores
  [B, n] float32}`, with the beam size, alpha, n-best and extra length of the
  export's `DecodingConfig`.
- `translate(text [B] string, beam_size, alpha, max_extra_length, n_best)`:
  the same outputs with the decoding parameters given per request (scalars;
  int32, float32, int32, int32).
- `translate_beam_K(text, alpha, max_extra_length, n_best)` for K = 1 ..
  `max_beam_size`: `translate` at beam size K (`beam_signature`), holding
  that one search; `Translator.from_export` calls these.
- `translate_ids(source_ids [B, S] int32, beam_size, alpha, max_extra_length,
  n_best) -> {ids [B, n, T] int32, scores [B, n] float32}`: ids as the model
  sees them (tokens, eos, then 0 for padding), for evaluation pipelines that
  tokenize themselves. T is the longest hypothesis of the batch.

Choices, all recorded in `BUILD_NOTES.md`:

- **Per-request beam size** selects one of `max_beam_size` searches traced at
  export (`tf.switch_case` over K = 1 .. `max_beam_size`), so each request runs
  exactly the search `translate(..., DecodingConfig(beam_size=K))` runs in
  Python (a parser's K = 1 runs greedy search, which finds the same tree:
  `one_beam_as_greedy`; the top n of
  one wide beam would give other hypotheses). Alpha and the extra length are
  ordinary tensors. The switch is lowered into the graph, so `translate`'s
  first call prepares every search (TF Serving's warm-up file pays it);
  `serving_default` and `translate_beam_K` hold one each (BUILD_NOTES.md,
  "Export").
- **Input length**: text becomes ids by `pipelines.encode_sources`, the path
  training, evaluation and the command line take: pieces truncated to
  `max_input_length - 1`, then eos (so the model never sees more than
  `max_input_length` positions, by default the model's `max_sequence_length`;
  the command line passes the recipe's training length); `translate_ids`
  keeps the first `max_input_length` columns.
- **A buffer per batch**: the decoding buffer has S + `max_extra_length`
  positions rounded up to a multiple of `translator_search.BUFFER_STEP`
  (16), S the request's longest source (its padded width) and
  `max_extra_length` the request's
  (`decoding_buffer_length`). The buffer size is a run-time tensor (the
  searches run in TensorFlow graph mode, not XLA: on CPU graph mode decodes
  faster, `BUILD_NOTES.md`, "Export"), so a short request does not pay for
  the longest input the export accepts (`max_input_length +
  max_extra_length_limit`, the most it can be). Each sentence still stops at
  its own source length + `max_extra_length` (paper §6.1), so the results
  equal Python `translate`'s on the same ids, whose buffer is the exact
  S + `max_extra_length`. The rounding bounds the buffer shapes a server
  meets: the first request of a new buffer size sets up its kernels (slower
  than the requests after it; BUILD_NOTES.md, "Export"), and the warm-up file
  (`savedmodels.warmup`) holds one single sentence per reachable size.
- **Empty input** (no piece: empty or whitespace-only text, or a row of only
  pad/eos ids) gives empty translations with score 0.
- **Invalid UTF-8** is replaced, not refused (`encode_sources`): each invalid
  byte sequence becomes U+FFFD, as Python's `bytes.decode("utf-8",
  errors="replace")` does, so one bad line does not fail a whole batch.

Notation: B batch, S source length, K beams, n n-best, T target length.
"""

import keras
import tensorflow as tf

from keras_transformer.decoding.bracket_constraint import tree_length_limit
from keras_transformer.decoding.decoding_config import DecodingConfig
from keras_transformer.validation import check_non_negative_int, check_positive_int
from pipelines import encode_sources
from pipelines.tokenizers.special_tokens import EOS_ID, PAD_ID
from savedmodels.translator_search import (
    beam_signature,
    check_request,
    decoding_buffer_length,
    make_search,
    reduce_max_or_zero,
)

SCALAR_SPECS = {
    "beam_size": tf.TensorSpec([], tf.int32, name="beam_size"),
    "alpha": tf.TensorSpec([], tf.float32, name="alpha"),
    "max_extra_length": tf.TensorSpec([], tf.int32, name="max_extra_length"),
    "n_best": tf.TensorSpec([], tf.int32, name="n_best"),
}
TEXT_SPEC = tf.TensorSpec([None], tf.string, name="text")
IDS_SPEC = tf.TensorSpec([None, None], tf.int32, name="source_ids")


class TranslatorModule(tf.Module):
    """A `Transformer` and its tokenizer as a servable `tf.Module`.

    See the module docstring for the signatures and their behaviour. Export
    it with `savedmodels.export_translator`, which saves the signatures only
    (each search traced once), the TF Serving layout and the reproducibility
    record. TensorFlow backend only.

    Args:
        model: a `keras_transformer.Transformer` with one (shared) vocabulary
            for source and target, as the tokenizer's.
        tokenizer: a `pipelines.SentencePieceTokenizer` (anything with
            `tokenize(strings) -> RaggedTensor`, `detokenize(ids) -> strings`
            and `vocab_size`, tracked as a `tf.Module`).
        decoding: a `DecodingConfig` with `method="beam"`: the beam size,
            alpha, n-best and extra length of `serving_default`. Defaults to
            `DecodingConfig()`, the paper's (§6.1).
        max_beam_size: int. The largest per-request beam size. Defaults to
            `8`.
        max_extra_length_limit: int. The largest per-request
            `max_extra_length`. Defaults to `decoding.max_extra_length`.
        max_input_length: int. Source positions, eos included; longer inputs
            are truncated. Defaults to the model's `max_sequence_length`.
        name: str. Module name. Defaults to `"translator"`.
        target_tokenizer: the target's own tokenizer (parsing's whole-token
            symbols, §6.3; the model then has a target vocabulary of its
            size), or `None` for the shared `tokenizer`.
        constraint: a `BracketConstraint` for every search (a parser's
            well-formed trees; `ParserModule` passes each request's word
            counts), or `None`.

    Examples:
        >>> module = TranslatorModule(model, tokenizer)
        >>> out = module.serving_default(tf.constant(["Hello world."]))
        >>> out["translations"].shape  # [B, n]
        TensorShape([1, 1])
    """

    def __init__(
        self,
        model,
        tokenizer,
        decoding=None,
        max_beam_size=8,
        max_extra_length_limit=None,
        max_input_length=None,
        name="translator",
        target_tokenizer=None,
        constraint=None,
    ):
        if keras.backend.backend() != "tensorflow":
            raise ValueError(
                "The exported translator needs the TensorFlow backend. "
                f"Received: backend={keras.backend.backend()}"
            )
        super().__init__(name=name)
        decoding = DecodingConfig() if decoding is None else decoding
        if not isinstance(decoding, DecodingConfig) or decoding.method != "beam":
            raise ValueError(
                "The exported translator runs beam search: `decoding` must be a "
                f"DecodingConfig with method='beam'. Received: decoding={decoding!r}"
            )
        if max_extra_length_limit is None:
            max_extra_length_limit = decoding.max_extra_length
        if max_input_length is None:
            max_input_length = model.max_sequence_length
        check_positive_int("max_beam_size", max_beam_size)
        check_non_negative_int("max_extra_length_limit", max_extra_length_limit)
        check_positive_int("max_input_length", max_input_length)
        if decoding.beam_size > max_beam_size:
            raise ValueError(
                "`beam_size` must be at most `max_beam_size`. Received: "
                f"beam_size={decoding.beam_size}, max_beam_size={max_beam_size}"
            )
        if decoding.max_extra_length > max_extra_length_limit:
            raise ValueError(
                "`max_extra_length` must be at most `max_extra_length_limit`. "
                f"Received: max_extra_length={decoding.max_extra_length}, "
                f"max_extra_length_limit={max_extra_length_limit}"
            )
        if max_input_length < 2:
            raise ValueError(
                "`max_input_length` must leave room for a piece and eos. "
                f"Received: max_input_length={max_input_length}"
            )
        target, name = tokenizer, "tokenizer"
        if target_tokenizer is not None:
            target, name = target_tokenizer, "target_tokenizer"
        if target.vocab_size != model.target_vocab_size:
            raise ValueError(
                "The target's tokenizer and the model's target vocabulary must "
                f"agree. Received: {name}.vocab_size={target.vocab_size}, "
                f"model.target_vocab_size={model.target_vocab_size}"
            )
        self.decoding = decoding
        self.max_beam_size = max_beam_size
        self.max_extra_length_limit = max_extra_length_limit
        self.max_input_length = max_input_length
        # The largest decoding buffer a request can get (see `_run`).
        buffer_length = max_input_length + max_extra_length_limit
        if model.position_encoding == "learned":
            buffer_length = min(buffer_length, model.max_sequence_length)
        self.max_buffer_length = buffer_length

        # Tracked: the tokenizer (its SentencePiece resource) and the weights.
        # The Keras model itself stays out of the object graph, in a closure.
        # The weights are tracked as the `tf.Variable`s inside the Keras
        # variables (`v.value`), the handles the traced functions capture: a
        # tracked Keras variable is saved as a copy with its own handle, which
        # the session-based loaders (TF Serving, `saved_model_cli run`) restore
        # while the functions read the original, never-restored one ("Could not
        # find variable ..."; keras-team/keras#20095). `tf.saved_model.load`
        # works either way.
        self.tokenizer = tokenizer
        # The target's own vocabulary (parsing's symbols, §6.3), else the
        # shared one: tracked once either way.
        if target_tokenizer is not None:
            self.target_tokenizer = target_tokenizer
        self.model_variables = [v.value for v in model.variables]
        self._search = make_search(model, decoding, max_beam_size, constraint)
        # The text ends of the signatures, shared as the searches are: traced
        # and stored once, however many signatures call them.
        self._encode = tf.function(
            self._text_to_ids, input_signature=[TEXT_SPEC], autograph=False
        )
        self._decode = tf.function(self._detokenized, autograph=False)
        # (signature name, beam size) -> that signature at one beam size
        self._beam_functions = {}

        self.serving_default = tf.function(
            self._serving_default, input_signature=[TEXT_SPEC], autograph=False
        )
        self.translate = tf.function(
            self._translate_text,
            input_signature=[TEXT_SPEC, *SCALAR_SPECS.values()],
            autograph=False,
        )
        self.translate_ids = tf.function(
            self._translate_ids,
            input_signature=[IDS_SPEC, *SCALAR_SPECS.values()],
            autograph=False,
        )

    def signatures(self):
        """`{name: concrete function}` for `tf.saved_model.save`."""
        return {
            "serving_default": self.serving_default.get_concrete_function(),
            "translate": self.translate.get_concrete_function(),
            "translate_ids": self.translate_ids.get_concrete_function(),
            **self._beam_signatures("translate", self.translate_with_beam),
        }

    def _beam_signatures(self, name, with_beam):
        """`{beam_signature(name, K): concrete function}` for K = 1 ..
        `max_beam_size`, `with_beam(K)` the signature `name` at beam K."""
        return {
            beam_signature(name, k): with_beam(k).get_concrete_function()
            for k in range(1, self.max_beam_size + 1)
        }

    # === Signatures ===

    # The searches are `tf.function`s (`make_search`): traced, and stored in
    # the SavedModel, once whichever signatures call them.

    def _serving_default(self, text):
        return self.translate_with_beam(self.decoding.beam_size)(
            text,
            tf.constant(float(self.decoding.alpha)),
            tf.constant(self.decoding.max_extra_length),
            tf.constant(self.decoding.n_best),
        )

    def _translate_text(self, text, beam_size, alpha, max_extra_length, n_best):
        source_ids = self._encode(text)
        outputs = self.translate_ids(
            source_ids, beam_size, alpha, max_extra_length, n_best
        )
        return self._decode(outputs)

    def _translate_ids(self, source_ids, beam_size, alpha, max_extra_length, n_best):
        source_ids = source_ids[:, : self.max_input_length]
        ids, scores = self._run(source_ids, beam_size, alpha, max_extra_length, n_best)
        return {"ids": ids, "scores": scores}

    # === At one beam size (signatures, and callers in this process) ===

    def translate_with_beam(self, beam_size):
        """`translate` at one beam size: the `translate_beam_K` signature,
        also for callers in this process (`Translator.from_run`).

        The `translate` signature takes the beam size as a tensor, so its
        graph holds one search per beam size up to `max_beam_size` (a
        `tf.switch_case`), all traced, and optimized on its first call.
        This function's graph holds the search of `beam_size` only.

        Args:
            beam_size: int. From 1 to `max_beam_size`.

        Returns:
            A `tf.function` `(text, alpha, max_extra_length, n_best) ->
            {"translations", "scores"}` with `translate`'s outputs and checks
            (one per module and beam size).
        """

        def run(text, alpha, max_extra_length, n_best):
            outputs = self._translate_ids(
                self._encode(text), beam_size, alpha, max_extra_length, n_best
            )
            return self._decode(outputs)

        return self._beam_function("translate", beam_size, run, SCALAR_SPECS)

    def _beam_function(self, name, beam_size, run, specs):
        """The `tf.function` of `run` (text and `specs`' scalars but the beam
        size) for the signature `name` at `beam_size`, made once."""
        check_positive_int("beam_size", beam_size)
        if beam_size > self.max_beam_size:
            raise ValueError(
                f"beam_size must be <= max_beam_size={self.max_beam_size}. "
                f"Received: beam_size={beam_size}"
            )
        key = (name, beam_size)
        if key not in self._beam_functions:
            self._beam_functions[key] = tf.function(
                run,
                input_signature=[
                    TEXT_SPEC,
                    *(spec for k, spec in specs.items() if k != "beam_size"),
                ],
                autograph=False,
            )
        return self._beam_functions[key]

    # === Pieces ===

    def _detokenized(self, outputs):
        """`translate_ids`' outputs as `translate`'s: the ids detokenized."""
        ids, scores = outputs["ids"], outputs["scores"]
        batch_size, n = tf.shape(ids)[0], tf.shape(ids)[1]
        # [B, n, T] -> [B*n, T] -> [B*n] -> [B, n]; pad, bos, eos are dropped
        flat = tf.reshape(ids, [batch_size * n, tf.shape(ids)[2]])
        translations = tf.reshape(self._target().detokenize(flat), [batch_size, n])
        return {"translations": translations, "scores": scores}

    def _target(self):
        """The target's tokenizer: its own, or the shared one."""
        return getattr(self, "target_tokenizer", self.tokenizer)

    def _text_to_ids(self, text):
        """`tf.string` [B] -> int32 [B, S]: `encode_sources`, then padding."""
        # [B] -> [B, (S)] -> [B, S], S <= max_input_length
        source = encode_sources(self.tokenizer, text, self.max_input_length)
        return source.to_tensor(default_value=PAD_ID)

    def _run(
        self, source_ids, beam_size, alpha, max_extra_length, n_best, word_counts=None
    ):
        """Checks the request, searches, keeps n best, blanks empty inputs
        (`word_counts` [B]: a parser's words, for its `BracketConstraint`)."""
        checks = check_request(
            beam_size,
            alpha,
            max_extra_length,
            n_best,
            self.max_beam_size,
            self.max_extra_length_limit,
        )
        with tf.control_dependencies(checks):
            source_ids = tf.identity(source_ids)
        buffer_length = decoding_buffer_length(
            tf.shape(source_ids)[1], max_extra_length, self.max_buffer_length
        )
        if word_counts is not None:
            # A parse: the batch's longest tree bounds the buffer.
            longest = reduce_max_or_zero(tree_length_limit(word_counts))
            buffer_length = tf.minimum(
                buffer_length, decoding_buffer_length(longest, 0, buffer_length)
            )
        arguments = (source_ids, alpha, max_extra_length, buffer_length, word_counts)
        if isinstance(beam_size, int):
            ids, scores = self._search[beam_size](*arguments)
        else:
            ids, scores = tf.switch_case(
                beam_size - 1,
                [
                    lambda k=k: self._search[k](*arguments)
                    for k in range(1, self.max_beam_size + 1)
                ],
            )
        # [B, K_max, T] -> [B, n, T] and [B, K_max] -> [B, n]
        ids, scores = ids[:, :n_best], scores[:, :n_best]
        # [B, S] -> [B]: no piece at all (empty or whitespace-only input)
        is_empty = tf.reduce_all(
            tf.logical_or(tf.equal(source_ids, PAD_ID), tf.equal(source_ids, EOS_ID)),
            axis=1,
        )
        ids = tf.where(is_empty[:, None, None], tf.zeros_like(ids), ids)
        scores = tf.where(is_empty[:, None], tf.zeros_like(scores), scores)
        # [B, n, T] -> [B, n, T'], T' the longest hypothesis of the batch
        lengths = tf.reduce_sum(tf.cast(tf.not_equal(ids, PAD_ID), tf.int32), -1)
        return ids[:, :, : reduce_max_or_zero(lengths)], scores
