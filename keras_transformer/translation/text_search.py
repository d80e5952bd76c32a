"""`TextSearch`: what `Translator` and `Parser` share, a search over raw
strings from a run or an export with the search settings a call may change.

The search itself is a function `fn(texts, decoding) -> (outputs [B, n],
scores [B, n])` over non-empty strings (`line_streaming`'s protocol): an
export's signature (`ExportSignature`) or a run's in-process search. The
settings come from the run's recipe or the export's record (`decoding`);
a call may override the fields the serving signatures take (`OVERRIDABLE`),
checked against the export's recorded limits before the signature would
refuse them with a TensorFlow error.
"""

import dataclasses

from keras_transformer.runs.user_error import UserError
from keras_transformer.validation import check_one_of

# The `DecodingConfig` fields a call may set, as the serving signatures take
# them (`n_best` too, where a call returns n-best lists).
OVERRIDABLE = ("method", "beam_size", "alpha", "max_extra_length")
# Greedy search is the signatures' one-beam search (`greedy_as_one_beam`);
# sampling is not exported.
METHODS = ("beam", "greedy")


class TextSearch:
    """A search over raw strings and its default settings.

    Args:
        search_fn: `fn(texts, decoding) -> (outputs [B, n], scores [B, n])`.
        decoding: the `DecodingConfig` a call uses where it sets nothing.
        source: str. The run directory or export it was loaded from.
        limits: dict or `None`. An export's recorded limits (its record's
            `decoding`: `max_beam_size`, `max_extra_length_limit`,
            `savedmodels.export_record.LIMITS`); `None` for a run's (none).
    """

    def __init__(self, search_fn, decoding, source, limits=None):
        self._search_fn = search_fn
        self.decoding = decoding
        self.source = source
        self.limits = dict(limits or {})

    @property
    def max_beam_size(self):
        """The largest beam an export accepts; `None` for a run's (any)."""
        return self.limits.get("max_beam_size")

    @classmethod
    def _from_signature(cls, export_dir, name, search_class, hint):
        """An instance over the export's signature `name` (refused, with
        `hint`, when the export has none), its decoding and limits from the
        export's record; `search_class(ExportSignature(...))` is the
        search."""
        from savedmodels.export_record import export_decoding, export_record
        from savedmodels.saved_model_files import load_saved_model

        decoding = export_decoding(export_dir)
        signatures = load_saved_model(export_dir).signatures
        if name not in signatures:
            raise UserError(
                f"{export_dir} has no `{name}` signature: {hint}. "
                f"Received: export_dir={export_dir!r}"
            )
        limits = export_record(export_dir)[0].get("decoding") or {}
        search = search_class(ExportSignature(signatures, name))
        return cls(search, decoding, str(export_dir), limits)

    def decoding_with(self, n_best=None, **overrides):
        """`decoding` with `overrides` (`OVERRIDABLE` fields; `None` keeps
        the default) and `n_best` (`None`: the default's, within the
        search's hypotheses), checked against what the search takes.

        Raises:
            ValueError: an unknown field, a method other than `"beam"` or
                `"greedy"`, a beam size or extra length over the export's
                limits, more hypotheses than the search returns.
        """
        unknown = sorted(set(overrides) - set(OVERRIDABLE))
        if unknown:
            raise ValueError(
                f"A call may set only {', '.join(OVERRIDABLE)} (and n_best). "
                f"Received: {', '.join(f'{k}={overrides[k]!r}' for k in unknown)}"
            )
        values = {k: v for k, v in overrides.items() if v is not None}
        check_one_of("method", values.get("method", self.decoding.method), METHODS)
        if n_best is None:  # the default's, cut to this call's search
            beams = dataclasses.replace(self.decoding, n_best=1, **values)
            n_best = min(self.decoding.n_best, beams.num_hypotheses)
        # `DecodingConfig` refuses more hypotheses than the search returns.
        decoding = self.decoding.with_overrides(**values, n_best=n_best)
        if self.limits:
            from savedmodels.export_record import check_export_limits

            check_export_limits(dataclasses.asdict(decoding), self.limits, self.source)
        return decoding

    def search(self, texts, decoding):
        """One batch: `(outputs [B, n], scores [B, n])` of `texts` (a list of
        non-empty str) under `decoding`: the search function that
        `line_streaming` (`stream_file`, `ordered_outputs`) batches for."""
        return self._search_fn(texts, decoding)


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


def greedy_as_one_beam(decoding):
    """Greedy search as the exported signatures run it: beam search with one
    beam (`translator_arguments`; a bracket-constrained parser's one beam is
    greedy search again, `one_beam_as_greedy`)."""
    if decoding.method == "greedy":
        return dataclasses.replace(decoding, method="beam", beam_size=1, n_best=1)
    return decoding


class ExportSignature:
    """A `translate`-like signature of a loaded export (`translate`,
    `parse`), called at each call's beam size through the signature of that
    beam size alone (`translate_beam_4`, `savedmodels.TranslatorModule`),
    whose first call prepares one search where the signature's own prepares
    every beam size's; an export without them (written before them) is
    called through the signature itself.

    Args:
        signatures: the loaded export's `signatures` mapping.
        name: str. The signature, `"translate"` or `"parse"`.
    """

    def __init__(self, signatures, name):
        self.signatures = signatures
        self.name = name

    def __call__(self, texts, decoding, **extra):
        """The signature's outputs on `texts` with `decoding`'s search
        scalars (greedy as one beam) and `extra` int32 scalars (e.g.
        `n_best`)."""
        import tensorflow as tf

        from savedmodels.translator_search import beam_signature

        decoding = greedy_as_one_beam(decoding)
        scalars = {
            "alpha": tf.constant(decoding.alpha, tf.float32),
            "max_extra_length": tf.constant(decoding.max_extra_length, tf.int32),
            **{k: tf.constant(v, tf.int32) for k, v in extra.items()},
        }
        signature = self.signatures.get(beam_signature(self.name, decoding.beam_size))
        if signature is None:
            signature = self.signatures[self.name]
            scalars["beam_size"] = tf.constant(decoding.beam_size, tf.int32)
        return signature(text=tf.constant(texts, tf.string), **scalars)
