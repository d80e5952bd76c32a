"""`keras-transformer evalb`: labelled bracket F1 of parsed trees (§6.3), as
EVALB (Sekine and Collins, 1997) reports it, with the package's scorer
(`keras_transformer.evaluation.evalb`)."""

import json
import sys

from keras_transformer.evaluation.evalb import evalb
from keras_transformer.evaluation.evalb_params import EvalbParams
from keras_transformer.evaluation.evalb_results import EvalbResult
from keras_transformer.runs.user_error import UserError

_BLOCK = (  # EVALB's summary lines: (title, EvalbSummary attribute, integer?)
    ("Number of sentence", "sentences", True),
    ("Number of Error sentence", "error_sentences", True),
    ("Number of Skip  sentence", "skip_sentences", True),
    ("Number of Valid sentence", "valid_sentences", True),
    ("Bracketing Recall", "recall", False),
    ("Bracketing Precision", "precision", False),
    ("Bracketing FMeasure", "f_measure", False),
    ("Complete match", "complete_match", False),
    ("Average crossing", "average_crossing", False),
    ("No crossing", "no_crossing", False),
    ("2 or less crossing", "two_or_less_crossing", False),
    ("Tagging accuracy", "tagging_accuracy", False),
)


def _read_lines(path, what):
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as file:
            text = file.read()
    except OSError as error:
        raise UserError(f"cannot read the {what} {path}: {error.strerror}") from None
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def format_summary(result: EvalbResult) -> str:
    """EVALB's `=== Summary ===` block: "All", then "len<=CUTOFF_LEN".

    Outside EVALB-compatible mode a "Number of Scored sentence" line follows
    the valid ones (the error sentences are scored as zero matched brackets);
    a line counts the test tags that took the gold tags, if any did.
    """
    lines = ["=== Summary ==="]
    titles = (("All", result.all), (f"len<={result.params.cutoff_len}", result.short))
    for title, summary in titles:
        lines += ["", f"-- {title} --"]
        for name, attribute, integer in _BLOCK:
            value = getattr(summary, attribute)
            lines.append(
                f"{name:<26}= {value:6d}" if integer else f"{name:<26}= {value:6.2f}"
            )
            if attribute == "valid_sentences" and not result.evalb_compatible:
                lines.append(
                    f"{'Number of Scored sentence':<26}= {summary.scored_sentences:6d}"
                )
    if result.placeholder_tags_replaced:
        lines += [
            "",
            f"{result.placeholder_tags_replaced} test tags {result.placeholder_tag!r} "
            "took the gold tags before scoring (tagging accuracy counts them).",
        ]
    return "\n".join(lines)


def evalb_files(
    gold_file,
    test_file,
    prm=None,
    evalb_compatible=False,
    placeholder_tag="XX",
    out=None,
    err=None,
) -> EvalbResult:
    """Scores `test_file` against `gold_file` and prints the report.

    Prints EVALB's summary block and then one JSON line (the files, the
    parameter file, `EvalbResult.to_dict()`) to `out`; the error sentences
    and warnings, one line each, to `err`.

    Args:
        gold_file: str. Gold trees, one per line.
        test_file: str. The parser's trees, line by line with `gold_file`.
        prm: str or `None`. An EVALB parameter file; `None` for the bundled
            `COLLINS.prm`. Defaults to `None`.
        evalb_compatible: bool. Leave error sentences out, as EVALB does.
            Defaults to `False`.
        placeholder_tag: str or `None`. Test tag replaced by the gold tags
            (`None` or `""`: none). Defaults to `"XX"`.
        out: text stream or `None` (`sys.stdout`). Defaults to `None`.
        err: text stream or `None` (`sys.stderr`). Defaults to `None`.

    Returns:
        The `EvalbResult`.

    Raises:
        UserError: a file cannot be read.
        ValueError: a bad parameter file, or unequal numbers of lines.
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    if prm is None:
        params = EvalbParams.collins()
    else:
        try:
            params = EvalbParams.from_file(prm)
        except OSError as error:
            raise UserError(
                f"cannot read the parameter file {prm}: {error.strerror}"
            ) from None
    gold = _read_lines(gold_file, "gold file")
    test = _read_lines(test_file, "test file")
    result = evalb(
        gold,
        test,
        params,
        evalb_compatible=evalb_compatible,
        gold_tags_for_placeholder=placeholder_tag or None,
    )
    for row in result.errors:
        print(f"keras-transformer evalb: line {row.line}: {row.reason}", file=err)
    for warning in result.warnings:
        print(f"keras-transformer evalb: warning: {warning}", file=err)
    print(format_summary(result), file=out)
    record = {"gold": str(gold_file), "test": str(test_file)}
    record["prm"] = "COLLINS.prm (bundled)" if prm is None else str(prm)
    print(json.dumps({**record, **result.to_dict()}), file=out)
    return result
