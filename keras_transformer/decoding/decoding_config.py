"""How to decode: the paper's search settings as one frozen object (§6.1).

"We used beam search with a beam size of 4 and length penalty alpha = 0.6 ...
We set the maximum output length during inference to input length + 50."
Those defaults are written here and nowhere else: `translate`, the recipes,
the command line and the exported SavedModel all read a `DecodingConfig`.
"""

import dataclasses
import numbers

from keras_transformer.decoding.beam_stopping import EARLY_STOPPINGS
from keras_transformer.validation import (
    check_dataclass_fields,
    check_non_negative_float,
    check_non_negative_int,
    check_one_of,
    check_positive_float,
    check_positive_int,
)

METHODS = ("beam", "greedy", "sample")
# How beam search divides a finished hypothesis' log probability by its
# length (`length_penalty.normalized_scores`): GNMT's ((5 + n) / 6)^alpha
# (the paper's, §6.1), or n^alpha (Marian's and Hugging Face's).
LENGTH_NORMALIZATIONS = ("gnmt", "average")


@dataclasses.dataclass(frozen=True)
class DecodingConfig:
    """Search settings, defaulting to the paper's beam search (§6.1).

    Two beam search options reproduce Hugging Face's `generate` for imported
    Marian models (`import_marian` sets them from the folder); trained runs
    keep the exact search:

    - `early_stopping`: when a sentence's search is done (`beam_stopping`).
      `"exact"` (default): once no alive beam can beat the K finished
      hypotheses at any length it may reach, so the K best are found (the
      paper's "terminate early when possible", §6.1; Hugging Face's
      `early_stopping="never"`). `"heuristic"`: once K are finished and the
      best alive beam would not beat them if it ended now (Hugging Face's
      default, `early_stopping=False`; it can stop before the best hypothesis
      is found). `"k_finished"`: once K are finished (Hugging Face's
      `early_stopping=True`).
    - `pad_in_softmax`: pad is never generated; `False` (default) leaves it
      out of the softmax, so the other tokens' probabilities sum to one
      (Hugging Face's `renormalize_logits=True`); `True` keeps its share in
      the softmax and bans it afterwards (Hugging Face's `bad_words_ids`,
      `renormalize_logits=False`, its default). Beam search only: greedy
      search picks the same tokens either way.

    Derive variants with `dataclasses.replace` (or `with_overrides`). Inside
    a traced search (the exported SavedModel's per-request parameters),
    `alpha` and `max_extra_length` may be tensors; only Python values are
    checked here, tensors are checked in the graph by the caller.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §6.1.
        - [Wu et al., 2016. Google's Neural Machine Translation System: Bridging the Gap
          between Human and Machine Translation](https://arxiv.org/abs/1609.08144), §7
          (Eq. 14, the length penalty).

    Examples:
        >>> config = DecodingConfig()
        >>> (config.beam_size, config.alpha, config.max_extra_length)
        (4, 0.6, 50)
        >>> greedy = dataclasses.replace(config, method="greedy")
    """

    method: str = "beam"  # "beam", "greedy" or "sample"
    beam_size: int = 4  # K of beam search (§6.1)
    alpha: float = 0.6  # length penalty exponent (§6.1)
    # "gnmt" ((5 + n) / 6)^alpha, the paper's; "average" n^alpha, imported
    # Marian models' (`length_penalty`).
    length_normalization: str = "gnmt"
    max_extra_length: int = 50  # output length <= input length + 50 (§6.1)
    # Beam search: when a sentence is done, "exact", "heuristic" or
    # "k_finished" (class docstring; `beam_stopping`).
    early_stopping: str = "exact"
    # Beam search: pad keeps its share of the softmax and is banned after it
    # (Hugging Face's `bad_words_ids`); False leaves it out of the softmax.
    pad_in_softmax: bool = False
    n_best: int = 1  # hypotheses returned per sentence, at most beam_size
    temperature: float = 1.0  # for "sample"
    top_k: int = 0  # for "sample"; 0 = the whole vocabulary
    # Beam search: the K beams of a sentence share one self-attention cache
    # row (K slots per position), so reordering beams moves no keys or values
    # (`translate`); False gathers one cache row per beam instead. Same
    # results either way.
    share_beam_cache: bool = True
    # Parsing (§6.3): search only well-formed linearized trees with one leaf
    # symbol per word (`BracketConstraint`; a stated deviation, the paper
    # does not say). `translate` refuses it without a constraint.
    constrain_brackets: bool = False
    # Parsing, with `constrain_brackets`: each close carries its bracket's
    # label and closes a non-empty constituent (a stack per hypothesis), so
    # no output needs a repair; False leaves close labels free.
    match_brackets: bool = False

    def __post_init__(self):
        check_one_of("method", self.method, METHODS)
        check_one_of(
            "length_normalization", self.length_normalization, LENGTH_NORMALIZATIONS
        )
        check_one_of("early_stopping", self.early_stopping, EARLY_STOPPINGS)
        check_positive_int("beam_size", self.beam_size)
        check_positive_int("n_best", self.n_best)
        if isinstance(self.alpha, numbers.Number):
            check_non_negative_float("alpha", self.alpha)
        if isinstance(self.max_extra_length, numbers.Number):
            check_non_negative_int("max_extra_length", self.max_extra_length)
        check_positive_float("temperature", self.temperature)
        check_non_negative_int("top_k", self.top_k)
        for name in ("pad_in_softmax", "constrain_brackets", "match_brackets"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(
                    f"`{name}` must be a bool. Received: {name}={getattr(self, name)!r}"
                )
        if self.match_brackets and not self.constrain_brackets:
            raise ValueError(
                "`match_brackets` refines the bracket constraint; set "
                "constrain_brackets=True, or match_brackets=False. Received: "
                "match_brackets=True, constrain_brackets=False"
            )
        if self.n_best > self.num_hypotheses:
            raise ValueError(
                f"`n_best` cannot exceed the hypotheses of `method={self.method!r}` "
                f"({self.num_hypotheses}). Received: n_best={self.n_best}, "
                f"beam_size={self.beam_size}"
            )

    @property
    def num_hypotheses(self) -> int:
        """Hypotheses a search returns per sentence: K for beam search, else 1."""
        return self.beam_size if self.method == "beam" else 1

    def with_overrides(self, **overrides) -> "DecodingConfig":
        """A copy with the given fields replaced; `None` values are ignored
        (an option the user did not set keeps this config's value)."""
        values = {key: value for key, value in overrides.items() if value is not None}
        return dataclasses.replace(self, **values)

    def to_dict(self) -> dict:
        """A JSON-ready dict of the fields (`from_dict` inverts it)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "DecodingConfig":
        """The inverse of `to_dict`; an unknown key fails naming it."""
        check_dataclass_fields(cls, values)
        return cls(**values)
