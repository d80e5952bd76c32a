"""`--compute-dtype bfloat16`: evaluate, export and translate computing in
bfloat16 from the float32 weights of a run."""

import json

import ml_dtypes
import numpy as np
import pytest

from keras_transformer import cli
from keras_transformer.cli.main import build_parser
from keras_transformer.runs.compute_dtypes import COMPUTE_DTYPE_POLICIES
from keras_transformer.runs.loaded_run import load_run
from tests.keras_transformer.cli.conftest import copy_run, user_error


def test_the_command_line_offers_the_loaders_compute_dtypes():
    parser = build_parser()
    for argv in (
        ["evaluate", "--run-dir", "."],
        ["translate"],
        ["export", "--run-dir", "."],
    ):
        for dtype in COMPUTE_DTYPE_POLICIES:
            args = parser.parse_args([*argv, "--compute-dtype", dtype])
            assert args.compute_dtype == dtype
    assert parser.parse_args(["evaluate", "--run-dir", "."]).compute_dtype == "float32"
    # translate and parse: `auto` with --run-dir (`_load`); an export keeps
    # the dtype it was exported with, named in its record, never `auto`.
    for command in ("translate", "parse", "evaluate"):
        args = parser.parse_args([command, "--run-dir", ".", "--compute-dtype", "auto"])
        assert args.compute_dtype == "auto"
    assert parser.parse_args(["translate"]).compute_dtype is None
    assert parser.parse_args(["parse"]).compute_dtype is None
    with pytest.raises(SystemExit):
        parser.parse_args(["export", "--run-dir", ".", "--compute-dtype", "auto"])


def test_a_bfloat16_model_holds_the_float32_weights_rounded(tiny_run):
    reference = load_run(str(tiny_run)).model
    model = load_run(str(tiny_run), compute_dtype="bfloat16").model
    assert (reference.compute_dtype, model.compute_dtype) == ("float32", "bfloat16")
    assert {v.dtype for v in model.weights} == {"bfloat16"}
    for mine, theirs in zip(model.get_weights(), reference.get_weights(), strict=True):
        rounded = theirs.astype(ml_dtypes.bfloat16)
        np.testing.assert_array_equal(mine.astype("float32"), rounded.astype("float32"))
    with pytest.raises(ValueError, match="Received: compute_dtype='float16'"):
        load_run(str(tiny_run), compute_dtype="float16")


def _translate(argv, source, capsys):
    capsys.readouterr()
    assert cli.main(["translate", *argv, "--input", str(source), "--n-best", "2"]) == 0
    return [line.split(" ||| ") for line in capsys.readouterr().out.splitlines()]


def test_bfloat16_evaluate_export_and_translate(tiny_run, tmp_path, capsys):
    run_dir = copy_run(tiny_run, tmp_path / "run")
    run = str(run_dir)
    bf16 = ["--compute-dtype", "bfloat16"]
    assert cli.main(["evaluate", "--run-dir", run, "--limit", "4", *bf16]) == 0
    scores = json.loads((run_dir / "eval" / "all.json").read_text())
    assert scores["compute_dtype"] == "bfloat16"

    # The default op check passes: the bfloat16 graph needs no op that TF
    # Serving lacks.
    assert cli.main(["export", "--run-dir", run, *bf16]) == 0
    # A float32 export of the same weights, without the bfloat16 evaluation.
    argv = ["export", "--run-dir", run, "--tf-text-version", "none"]
    assert cli.main(argv) == 0
    records = [
        json.loads((export / "assets.extra" / "record.json").read_text())
        for export in (run_dir / "export" / "1", run_dir / "export" / "2")
    ]
    assert [r["record"]["compute_dtype"] for r in records] == ["bfloat16", "float32"]
    assert records[0]["record"]["evaluation"]["bleu"] == scores["bleu"]
    assert "evaluation" not in records[1]["record"]
    # An evaluation written before the field existed was float32.
    older = {k: v for k, v in scores.items() if k != "compute_dtype"}
    (run_dir / "eval" / "all.json").write_text(json.dumps(older))
    assert cli.main(argv) == 0
    third = run_dir / "export" / "3" / "assets.extra" / "record.json"
    evaluation = json.loads(third.read_text())["record"]["evaluation"]
    assert evaluation["bleu"] == older["bleu"]

    source = tmp_path / "input.txt"
    source.write_text("Click OK.\n\nSelect a cell and click OK.\nOpen the file.\n")
    exported = _translate(["--export", str(run_dir / "export" / "1")], source, capsys)
    in_process = _translate(["--run-dir", run, *bf16], source, capsys)
    float32 = _translate(
        ["--run-dir", run, "--compute-dtype", "float32"], source, capsys
    )
    # The same bfloat16 search in process and exported: the same n-best
    # texts, scores to float noise.
    assert [row[:2] for row in exported] == [row[:2] for row in in_process]
    np.testing.assert_allclose(
        [float(row[2]) for row in exported],
        [float(row[2]) for row in in_process],
        atol=2e-4,
    )
    assert exported[2:4] == [["1", "", "0.0000"]] * 2  # empty line -> empty output
    # and it is not the float32 search: bfloat16 rounding moves the scores
    bf16_scores = [float(row[2]) for row in exported if row[0] != "1"]
    float32_scores = [float(row[2]) for row in float32 if row[0] != "1"]
    assert len(bf16_scores) == len(float32_scores) == 6
    assert bf16_scores != float32_scores

    # An export computes in its own dtype.
    argv = ["translate", "--export", str(run_dir / "export" / "2"), *bf16]
    assert "--compute-dtype is for --run-dir" in user_error(argv, capsys)
