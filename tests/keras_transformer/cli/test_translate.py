import io

import pytest

from keras_transformer.cli.translate import translate_lines
from keras_transformer.decoding.decoding_config import DecodingConfig


def fake_translator(calls):
    """Upper-cases each line; n-best i appends i stars; score -len - i."""

    def run(texts, decoding):
        n_best = decoding.n_best
        calls.append(len(texts))
        translations = [[t.upper() + "*" * i for i in range(n_best)] for t in texts]
        scores = [[-len(t) - i for i in range(n_best)] for t in texts]
        return translations, scores

    return run


def test_lines_are_translated_in_order_in_batches():
    calls, output = [], io.StringIO()
    count = translate_lines(
        fake_translator(calls), ["a\n", "bb\n", "\n", "c"], output, batch_size=3
    )
    assert count == 4 and calls == [3, 1]
    assert output.getvalue() == "A\nBB\n\nC\n"


def test_n_best_uses_the_moses_format():
    output = io.StringIO()
    decoding = DecodingConfig(beam_size=2, n_best=2)
    translate_lines(fake_translator([]), ["ab", "c"], output, decoding=decoding)
    assert output.getvalue().splitlines() == [
        "0 ||| AB ||| -2.0000",
        "0 ||| AB* ||| -3.0000",
        "1 ||| C ||| -1.0000",
        "1 ||| C* ||| -2.0000",
    ]


def test_progress_goes_to_its_own_stream():
    output, progress = io.StringIO(), io.StringIO()
    translate_lines(
        fake_translator([]),
        ["a", "b"],
        output,
        batch_size=1,
        total=2,
        progress=progress,
    )
    assert "translated 2/2 lines" in progress.getvalue()
    assert "translated" not in output.getvalue()


def test_more_hypotheses_than_beams_is_refused():
    # Refused where the options become a DecodingConfig (a ValueError is a
    # user error at the command line: one line, exit status 2).
    with pytest.raises(ValueError, match="n_best=5, beam_size=4"):
        DecodingConfig().with_overrides(n_best=5)
