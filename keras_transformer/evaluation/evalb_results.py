"""What the EVALB-compatible scorer returns: a row per sentence
(`EvalbSentence`), EVALB's summary block (`EvalbSummary`) and both together
(`EvalbResult`); see `keras_transformer.evaluation.evalb`."""

import dataclasses
from collections.abc import Iterable

from keras_transformer.evaluation.evalb_params import EvalbParams


class _Percentages:
    """Recall, precision and tagging accuracy (percent) of the counts
    `matched`, `gold_brackets`, `test_brackets`, `correct_tags`, `words`."""

    @property
    def recall(self) -> float:
        return _percent(self.matched, self.gold_brackets)

    @property
    def precision(self) -> float:
        return _percent(self.matched, self.test_brackets)

    @property
    def tagging_accuracy(self) -> float:
        return _percent(self.correct_tags, self.words)


@dataclasses.dataclass(frozen=True)
class EvalbSentence(_Percentages):
    """One row of EVALB's table: a line's status and counts.

    `length` is the gold's length (see the module docstring); `words` the
    gold's words after deletion; `reason` says why a sentence is an error or a
    skip; `scored` whether its counts enter the summaries (status 0, and by
    default status 1); `placeholder_tags` how many test tags took the gold's.
    """

    line: int
    length: int
    status: int
    matched: int
    gold_brackets: int
    test_brackets: int
    crossing: int
    words: int
    correct_tags: int
    scored: bool
    reason: str | None = None
    placeholder_tags: int = 0

    @property
    def complete_match(self) -> bool:
        return self.status == 0 and (
            self.matched == self.gold_brackets == self.test_brackets
        )


def _percent(count, total):
    return 100.0 * count / total if total else 0.0


@dataclasses.dataclass(frozen=True)
class EvalbSummary(_Percentages):
    """EVALB's summary block over some sentences, micro-averaged.

    `valid_sentences` is EVALB's "Number of Valid sentence" (neither error
    nor skip); `scored_sentences` the sentences whose counts are summed here
    (the valid ones, plus the error sentences by default), the denominator of
    complete match and of the crossing figures. Percentages are properties.
    """

    sentences: int
    error_sentences: int
    skip_sentences: int
    scored_sentences: int
    matched: int
    gold_brackets: int
    test_brackets: int
    complete_sentences: int
    crossing: int
    no_crossing_sentences: int
    two_or_less_crossing_sentences: int
    words: int
    correct_tags: int

    @classmethod
    def of(cls, rows: Iterable[EvalbSentence]) -> "EvalbSummary":
        """Sums the rows' counts (the scored rows' for the figures)."""
        rows = list(rows)
        scored = [row for row in rows if row.scored]
        return cls(
            sentences=len(rows),
            error_sentences=sum(row.status == 1 for row in rows),
            skip_sentences=sum(row.status == 2 for row in rows),
            scored_sentences=len(scored),
            matched=sum(row.matched for row in scored),
            gold_brackets=sum(row.gold_brackets for row in scored),
            test_brackets=sum(row.test_brackets for row in scored),
            complete_sentences=sum(row.complete_match for row in scored),
            crossing=sum(row.crossing for row in scored),
            no_crossing_sentences=sum(row.crossing == 0 for row in scored),
            two_or_less_crossing_sentences=sum(row.crossing <= 2 for row in scored),
            words=sum(row.words for row in scored),
            correct_tags=sum(row.correct_tags for row in scored),
        )

    @property
    def valid_sentences(self) -> int:
        return self.sentences - self.error_sentences - self.skip_sentences

    @property
    def f_measure(self) -> float:
        recall, precision = self.recall, self.precision
        total = recall + precision
        return 2 * recall * precision / total if total else 0.0

    @property
    def complete_match(self) -> float:
        return _percent(self.complete_sentences, self.scored_sentences)

    @property
    def average_crossing(self) -> float:
        count = self.scored_sentences
        return self.crossing / count if count else 0.0

    @property
    def no_crossing(self) -> float:
        return _percent(self.no_crossing_sentences, self.scored_sentences)

    @property
    def two_or_less_crossing(self) -> float:
        return _percent(self.two_or_less_crossing_sentences, self.scored_sentences)

    def to_dict(self) -> dict:
        """The counts and the percentages (rounded to 2 places, as EVALB)."""
        names = ("recall", "precision", "f_measure", "complete_match")
        names += ("average_crossing", "no_crossing", "two_or_less_crossing")
        result = dataclasses.asdict(self)
        result["valid_sentences"] = self.valid_sentences
        result.update({name: round(getattr(self, name), 2) for name in names})
        result["tagging_accuracy"] = round(self.tagging_accuracy, 2)
        return result


@dataclasses.dataclass(frozen=True)
class EvalbResult:
    """What `evalb` returns: the rows and the two summary blocks.

    `all` covers every sentence, `short` those of length <=
    `params.cutoff_len` (EVALB's "len<=40"). `placeholder_tag` is the
    `gold_tags_for_placeholder` the scores were computed with (`None`: test
    tags kept), `placeholder_tags_replaced` how many test tags it replaced;
    `warnings` what EVALB would print beside its table (different numbers of
    lines).
    """

    sentences: tuple[EvalbSentence, ...]
    all: EvalbSummary
    short: EvalbSummary
    params: EvalbParams
    evalb_compatible: bool
    placeholder_tag: str | None
    warnings: tuple[str, ...] = ()

    @property
    def placeholder_tags_replaced(self) -> int:
        return sum(row.placeholder_tags for row in self.sentences)

    @property
    def errors(self) -> tuple[EvalbSentence, ...]:
        return tuple(row for row in self.sentences if row.status == 1)

    def to_dict(self) -> dict:
        """A JSON-ready summary: settings, both blocks, the error lines."""
        return {
            "evalb_compatible": self.evalb_compatible,
            "placeholder_tag": self.placeholder_tag,
            "placeholder_tags_replaced": self.placeholder_tags_replaced,
            "cutoff_len": self.params.cutoff_len,
            "all": self.all.to_dict(),
            "short": self.short.to_dict(),
            "errors": [{"line": r.line, "reason": r.reason} for r in self.errors],
            "warnings": list(self.warnings),
        }
