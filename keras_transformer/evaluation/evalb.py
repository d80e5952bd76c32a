"""EVALB-compatible labelled bracket scoring of constituency parses (§6.3).

The paper's English constituency parsing results (§6.3, Table 4) are
labelled bracket F1 as parsing papers report it: EVALB (Sekine and Collins,
1997) with Collins' parameter file `COLLINS.prm`, bundled here as
`data/COLLINS.prm` (from EVALB's public-domain distribution) and read as data
by `EvalbParams.collins()`. Like EVALB, the scorer works on strings, one
sentence per line, and never builds trees: a line is a sequence of labelled
spans over its words, and may hold several brackets at its top level
(`(P this) (Q is)`); an empty line is a "skip" sentence.

EVALB's rules, each driven by a key of the parameter file:

- Deletion (`DELETE_LABEL`; COLLINS.prm: `TOP`, `-NONE-` and the punctuation
  tags `,` `:` ``` `` ``` `''` `.`): a preterminal with such a tag goes with
  its word; a constituent with such a label goes but its children stay; a
  constituent left without words goes too.
- Labels: function tags and indices are cut at the first `-` or `=`
  (`NP-SBJ-1` -> `NP`); the pairs of `EQ_LABEL` (`ADVP PRT`) are one label,
  for brackets and for tags; `LABELED 0` ignores bracket labels.
- Brackets are (label, start, end) spans of constituents, matched between
  gold and test as multisets; preterminals are never brackets.
- Length (for the `len<=CUTOFF_LEN` figures): the gold line's preterminals
  except those tagged `DELETE_LABEL_FOR_LENGTH` (`-NONE-`); punctuation
  counts.
- Status: 2, skip, when the test line has no words after deletion; 1, error,
  when the lines' words differ after deletion (in number, or a word, the
  pairs of `EQ_WORD` being equal) or a line is not well-formed brackets; 0
  otherwise. `QUOTE_LABEL` tags first get EVALB's quote repair when the
  numbers of words differ.
- Figures, micro-averaged over the corpus: recall and precision of matched
  brackets; complete match, gold, test and matched counts all equal; crossing,
  the test brackets that cross some gold bracket; tagging accuracy, tags equal
  word by word after deletion.

Error sentences. EVALB silently leaves out a sentence whose words differ
from the gold (`evalb_compatible=True` does the same, and stops where EVALB
does, at error number `MAX_ERROR + 2`). By default an error sentence instead
scores as a parse that got nothing right: zero matched brackets, with its
gold brackets and its test brackets (each line's own, after the same
deletions) in the recall and precision denominators, every test bracket
crossing, its gold words in the tagging denominator with none correct, never
a complete match. It is reported (`EvalbSentence.reason`) and counted in
`EvalbSummary.error_sentences`. Skip sentences are left out in both modes, as
EVALB does.

Placeholder tags. A parser may emit a placeholder tag (`XX`) for every word;
EVALB deletes punctuation by tag, so such leaves first take the gold tags
(`gold_tags_for_placeholder`), when the two lines' leaves hold the same
words (the gold's `-NONE-` leaves may be absent from the test). The count is
`EvalbSentence.placeholder_tags`; tagging accuracy then says nothing about
those words.

Deviations from EVALB's C code: no limits on the length of a line or on the
numbers of words and brackets; a line that is not well-formed (a word beside
other children, unbalanced brackets) is an error sentence, where EVALB stops
or reads past its arrays; different numbers of lines are refused by default
(`evalb_compatible=True` scores the common lines, as EVALB, with a warning);
a parameter file with an unknown key or a bad value is refused naming the key
and line (EVALB warns and goes on); `DEBUG` is read and ignored; the
F-measure is 0 where recall and precision are both 0 (EVALB prints `nan`).
The Words column of an error or skip row is the gold's number of words, as in
EVALB's own `sample.rsl`.
"""

import dataclasses
import re
from collections.abc import Iterable

from keras_transformer.evaluation.evalb_params import SPACE_CHARACTERS, EvalbParams
from keras_transformer.evaluation.evalb_results import (
    EvalbResult,
    EvalbSentence,
    EvalbSummary,
)

_ATOM = re.compile(r"[^ \t\n\v\f\r()]*")
_SPACES = re.compile(r"[ \t\n\v\f\r]*")
_QUOTE_WORDS = ("'", '"', "/")  # EVALB's is_quote_term


@dataclasses.dataclass
class _Line:
    """One line as EVALB reads it; mutable, as EVALB's quote repair edits it."""

    words: list = dataclasses.field(default_factory=list)  # after deletion
    tags: list = dataclasses.field(default_factory=list)  # their tags
    brackets: list = dataclasses.field(default_factory=list)  # [label, start, end]
    length: int = 0  # preterminals not tagged DELETE_LABEL_FOR_LENGTH
    leaves: list = dataclasses.field(default_factory=list)  # (tag, word), all
    quotes: list = dataclasses.field(default_factory=list)  # see _read
    problem: str | None = None  # why the line is not well-formed brackets


def _read(text, params, tags=None):
    """Reads a line into words and labelled spans, as EVALB's read_line.

    `tags`, when given, replaces the tag of every leaf (by position). A
    `QUOTE_LABEL` leaf is kept in `quotes` as `[tag, word, index, next
    bracket, open brackets]`, for `_repair_quotes`.
    """
    line, stack, p = _Line(), [], 0
    while p < len(text):
        if text[p] in SPACE_CHARACTERS:
            p += 1
        elif text[p] == "(":
            start, p = p + 1, _ATOM.match(text, p + 1).end()
            label = text[start:p]
            word_start = _SPACES.match(text, p).end()
            word_end = _ATOM.match(text, word_start).end()
            if word_start > p and text.startswith(")", word_end):  # (TAG word)
                word = text[word_start:word_end]
                if tags is not None:
                    label = tags[len(line.leaves)]
                line.leaves.append((label, word))
                line.length += label not in params.delete_labels_for_length
                if label in params.quote_labels and word in _QUOTE_WORDS:
                    spans = len(line.brackets)
                    line.quotes.append([label, word, len(line.words), spans, stack[:]])
                if label not in params.delete_labels:
                    line.words.append(word)
                    line.tags.append(label)
                p = word_end + 1
            else:  # a constituent: its span closes at its ")"
                stack.append(len(line.brackets))
                line.brackets.append([label, len(line.words), None])
        elif text[p] == ")":
            if stack:
                line.brackets[stack.pop()][2] = len(line.words)
            else:
                line.problem = line.problem or "a ')' closes no bracket"
            p += 1
        else:
            end = _ATOM.match(text, p).end()
            line.problem = line.problem or f"word {text[p:end]!r} outside a (TAG word)"
            p = end
    if stack:
        line.problem = line.problem or f"{len(stack)} bracket(s) left open"
        for index in stack:  # closed at the end, for the default mode's counts
            line.brackets[index][2] = len(line.words)
    return line


def _repair_quotes(gold, test, params):
    """EVALB's fix_quote: a quote leaf one side deleted (`''`) and the other
    kept (`POS`) at the same position is put back on the deleting side."""
    deleted = params.delete_labels
    for test_quote in test.quotes:
        index = test_quote[2]
        for gold_quote in gold.quotes:
            if gold_quote[2] != index or gold_quote[0] == test_quote[0]:
                continue
            if gold_quote[0] in deleted and test_quote[0] not in deleted:
                _reinsert(gold, gold_quote)
            elif test_quote[0] in deleted and gold_quote[0] not in deleted:
                _reinsert(test, test_quote)


def _reinsert(line, quote):
    tag, word, index, first_after, enclosing = quote
    line.words.insert(index, word)
    line.tags.insert(index, tag)
    for bracket in line.brackets[first_after:]:  # opened after the leaf
        bracket[1] += 1
        bracket[2] += 1
    for bracket_index in enclosing:
        line.brackets[bracket_index][2] += 1
    position = next(i for i, other in enumerate(line.quotes) if other is quote)
    for later in line.quotes[position:]:  # this leaf's and the later ones
        later[2] += 1


def _scored_brackets(line, params):
    """(label, start, end) of the brackets EVALB scores (its massage_data)."""
    kept = []
    for label, start, end in line.brackets:
        label = re.split("[-=]", label, maxsplit=1)[0]  # NP-SBJ-1 -> NP
        deleted = any(params.same_label(label, d) for d in params.delete_labels)
        if start != end and not deleted:
            kept.append((label, start, end))
    return kept


def _matched(gold, test, params):
    """Matched brackets, each test bracket used once (EVALB's greedy order)."""
    free, count = list(test), 0
    for label, start, end in gold:
        for j, (other, other_start, other_end) in enumerate(free):
            same = not params.labeled or params.same_label(label, other)
            if (start, end) == (other_start, other_end) and same:
                del free[j]
                count += 1
                break
    return count


def _crossing(gold, test):
    """Test brackets crossing some gold bracket (EVALB counts on the test)."""
    return sum(
        any(gs < ts < ge < te or ts < gs < te < ge for _, gs, ge in gold)
        for _, ts, te in test
    )


def _gold_tags(gold, test, params, placeholder):
    """The test leaves' tags with `placeholder` ones taken from the gold, or
    `None` where the leaves' words differ (with or without `-NONE-` leaves)."""
    trace_free = [
        leaf for leaf in gold.leaves if leaf[0] not in params.delete_labels_for_length
    ]
    for leaves in (gold.leaves, trace_free):
        if len(leaves) == len(test.leaves) and all(
            params.same_word(g[1], t[1])
            for g, t in zip(leaves, test.leaves, strict=True)
        ):
            return [
                g[0] if t[0] == placeholder else t[0]
                for g, t in zip(leaves, test.leaves, strict=True)
            ]
    return None


def _sentence(number, gold_text, test_text, params, evalb_compatible, placeholder):
    """Scores one pair of lines (EVALB's calc_result)."""
    gold, test = _read(gold_text, params), _read(test_text, params)
    replaced = 0
    if placeholder is not None and any(t == placeholder for t, _ in test.leaves):
        tags = _gold_tags(gold, test, params, placeholder)
        if tags is not None:
            replaced = sum(t == placeholder for t, _ in test.leaves)
            test = _read(test_text, params, tags)
    row = dict(line=number, length=gold.length, words=len(gold.words))
    row["placeholder_tags"] = replaced
    reason = None
    if not test.words:
        reason = "the test line has no words"
    elif gold.problem or test.problem:
        reason = f"gold: {gold.problem}" if gold.problem else f"test: {test.problem}"
    else:
        if len(gold.words) != len(test.words) and params.quote_labels:
            _repair_quotes(gold, test, params)
            row["words"] = len(gold.words)
        if len(gold.words) != len(test.words):
            reason = f"length unmatch ({len(gold.words)}|{len(test.words)})"
        else:
            pairs = zip(gold.words, test.words, strict=True)
            unmatched = [(g, t) for g, t in pairs if not params.same_word(g, t)]
            reason = (
                "words unmatch ({}|{})".format(*unmatched[0]) if unmatched else None
            )
    gold_brackets = _scored_brackets(gold, params)
    test_brackets = _scored_brackets(test, params)
    if reason is None:
        return EvalbSentence(
            **row,
            status=0,
            matched=_matched(gold_brackets, test_brackets, params),
            gold_brackets=len(gold_brackets),
            test_brackets=len(test_brackets),
            crossing=_crossing(gold_brackets, test_brackets),
            correct_tags=sum(map(params.same_label, gold.tags, test.tags)),
            scored=True,
        )
    status = 2 if not test.words else 1
    row.update(status=status, reason=reason, matched=0, correct_tags=0)
    if status == 2 or evalb_compatible:  # left out, as EVALB
        return EvalbSentence(
            **row, gold_brackets=0, test_brackets=0, crossing=0, scored=False
        )
    return EvalbSentence(  # a parse that got nothing right
        **row,
        gold_brackets=len(gold_brackets),
        test_brackets=len(test_brackets),
        crossing=len(test_brackets),
        scored=True,
    )


def _lines(lines):
    if isinstance(lines, str):
        lines = lines.split("\n")
        return lines[:-1] if lines and lines[-1] == "" else lines
    return list(lines)


def evalb(
    gold_lines: Iterable[str] | str,
    test_lines: Iterable[str] | str,
    params: EvalbParams | None = None,
    evalb_compatible: bool = False,
    gold_tags_for_placeholder: str | None = "XX",
) -> EvalbResult:
    """Scores test parses against gold parses as EVALB does (§6.3).

    Args:
        gold_lines: iterable of str, or str. The gold trees, one per line (a
            str is split at newlines).
        test_lines: iterable of str, or str. The parser's trees, line by line
            with `gold_lines`; an empty line is a skip sentence.
        params: `EvalbParams` or `None`. The parameter file's settings, or
            `None` for `EvalbParams.collins()`. Defaults to `None`.
        evalb_compatible: bool. Leave error sentences out, as EVALB does
            (with MAX_ERROR and unequal numbers of lines as EVALB), instead of
            scoring them as zero matched brackets (see the module docstring).
            Defaults to `False`.
        gold_tags_for_placeholder: str or `None`. A test tag that stands for
            "no tag" (`XX`): such leaves take the gold tags before scoring;
            `None` keeps every test tag. Defaults to `"XX"`.

    Returns:
        An `EvalbResult`: per-sentence rows, the "all" and "len<=CUTOFF_LEN"
        summaries.

    Raises:
        ValueError: the numbers of lines differ (not `evalb_compatible`), or
            (`evalb_compatible`) the errors reach EVALB's limit.

    References:
        - [Sekine & Collins, 1997. EVALB](https://nlp.cs.nyu.edu/evalb/).
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §6.3 (Table 4).

    Examples:
        >>> result = evalb(["(S (NP (DT a) (NN b)) (VP (VB c)))"],
        ...                ["(S (NP (DT a)) (VP (NN b) (VB c)))"])
        >>> round(result.all.f_measure, 2), result.all.tagging_accuracy
        (33.33, 100.0)
    """
    params = EvalbParams.collins() if params is None else params
    gold_lines, test_lines = _lines(gold_lines), _lines(test_lines)
    warnings = []
    if len(gold_lines) != len(test_lines):
        message = (
            f"numbers of lines differ: {len(gold_lines)} gold, {len(test_lines)} test"
        )
        if not evalb_compatible:
            raise ValueError(message)
        warnings.append(message + "; EVALB scores the first lines of both")
    rows, errors = [], 0
    for number, (gold, test) in enumerate(
        zip(gold_lines, test_lines, strict=False), start=1
    ):
        row = _sentence(
            number, gold, test, params, evalb_compatible, gold_tags_for_placeholder
        )
        rows.append(row)
        errors += row.status == 1
        if evalb_compatible and errors > params.max_error + 1:
            raise ValueError(
                f"{errors} error sentences by line {number}: EVALB stops here "
                f"(MAX_ERROR={params.max_error}; raise it in the .prm file)"
            )
    short = [row for row in rows if row.length <= params.cutoff_len]
    return EvalbResult(
        sentences=tuple(rows),
        all=EvalbSummary.of(rows),
        short=EvalbSummary.of(short),
        params=params,
        evalb_compatible=evalb_compatible,
        placeholder_tag=gold_tags_for_placeholder,
        warnings=tuple(warnings),
    )
