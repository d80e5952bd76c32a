"""`keras-transformer evalb`: EVALB's summary block and a JSON line, one-line
errors with exit status 2."""

import json
import pathlib

import pytest

from keras_transformer import cli
from tests.keras_transformer.cli.conftest import user_error

SAMPLE = pathlib.Path(__file__).parents[1] / "evaluation" / "evalb_sample"
GOLD, TEST = str(SAMPLE / "sample.gld"), str(SAMPLE / "sample.tst")


def _summary_of_sample_rsl():
    lines = (SAMPLE / "sample.rsl").read_text().splitlines()
    return lines[lines.index("=== Summary ===") :]


def test_compatible_mode_prints_sample_rsl_summary(capsys):
    status = cli.main(
        ["evalb", GOLD, TEST, "--prm", str(SAMPLE / "sample.prm"), "--evalb-compatible"]
    )
    out, err = capsys.readouterr()
    assert status == 0
    lines = out.splitlines()
    # sample.rsl's release printed no F-measure line; ours does, as EVALB now.
    printed = [line for line in lines[:-1] if not line.startswith("Bracketing FM")]
    assert printed == _summary_of_sample_rsl()
    assert "Bracketing FMeasure       =  89.12" in lines
    record = json.loads(lines[-1])
    assert record["evalb_compatible"] is True
    assert record["all"]["recall"] == 87.76 and record["all"]["precision"] == 90.53
    assert record["short"]["valid_sentences"] == 16
    assert record["prm"].endswith("sample.prm")
    assert [e["line"] for e in record["errors"]] == [12, 13, 16, 17, 20]
    assert "line 12: words unmatch (is|was)" in err


def test_default_mode_uses_collins_and_scores_errors(capsys):
    assert cli.main(["evalb", GOLD, TEST]) == 0
    out, err = capsys.readouterr()
    assert "Number of Scored sentence =     22" in out
    record = json.loads(out.splitlines()[-1])
    assert record["prm"] == "COLLINS.prm (bundled)"
    assert record["evalb_compatible"] is False
    # COLLINS.prm has no EQ_WORD This this: sentence 19 is an error too.
    assert [e["line"] for e in record["errors"]] == [12, 13, 16, 17, 19, 20]
    assert record["all"]["scored_sentences"] == 22
    assert len(err.strip().splitlines()) == 6
    assert "line 19: words unmatch (this|This)" in err


def test_placeholder_tags_are_reported(tmp_path, capsys):
    gold = tmp_path / "gold.txt"
    test = tmp_path / "test.txt"
    gold.write_text("(S (NP (NNP John)) (VP (VBD ran)) (. .))\n")
    test.write_text("(S (NP (XX John)) (VP (XX ran)) (XX .))\n")
    assert cli.main(["evalb", str(gold), str(test)]) == 0
    out = capsys.readouterr().out
    assert "3 test tags 'XX' took the gold tags" in out
    record = json.loads(out.splitlines()[-1])
    assert record["placeholder_tags_replaced"] == 3
    assert record["all"]["f_measure"] == 100.0
    assert cli.main(["evalb", str(gold), str(test), "--placeholder-tag", ""]) == 0
    record = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert record["placeholder_tag"] is None
    assert record["all"]["error_sentences"] == 1


def test_missing_file_is_a_one_line_error(tmp_path, capsys):
    missing = str(tmp_path / "nothing.gld")
    err = user_error(["evalb", missing, TEST], capsys)
    assert "gold file" in err and missing in err
    err = user_error(["evalb", GOLD, TEST, "--prm", missing], capsys)
    assert "parameter file" in err and missing in err


def test_bad_prm_is_a_one_line_error(tmp_path, capsys):
    prm = tmp_path / "bad.prm"
    prm.write_text("LABELED 1\nDELETE_LABLE TOP\n")
    err = user_error(["evalb", GOLD, TEST, "--prm", str(prm)], capsys)
    assert "line 2, key DELETE_LABLE: unknown key" in err and str(prm) in err


def test_unequal_numbers_of_lines_is_a_one_line_error(tmp_path, capsys):
    short = tmp_path / "short.tst"
    short.write_text("(S (A (P this)))\n")
    err = user_error(["evalb", GOLD, str(short)], capsys)
    assert "24 gold, 1 test" in err


def test_help(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["evalb", "--help"])
    assert exit_info.value.code == 0
    assert "--evalb-compatible" in capsys.readouterr().out
