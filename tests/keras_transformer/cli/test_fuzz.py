"""Generated bad input for every subcommand: never a traceback.

Hypothesis draws a subcommand, then at least one fault: an option value out
of range or of the wrong type, an unknown argument, or a damaged file (empty,
binary, a truncated copy of the real artefact, a folder in its place, invalid
UTF-8) among the run's and the export's files and the input. Each case runs
on a hard-linked copy of one shared tiny exported run (damaging a file
replaces it, so the original is never touched). It asserts one line on
stderr, no traceback, exit status 2 (0 allowed where every input is valid for
`recipes` and `evalb`), and that no file outside the case's directory changed.
"""

import contextlib
import io
import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keras_transformer import cli

BAD_POSITIVE_INT = ["0", "-3", "x", "2.5", "nan", "", "1e3"]
BAD_NON_NEGATIVE_INT = ["-1", "x", "2.5", "nan", ""]
BAD_NON_NEGATIVE_FLOAT = ["nan", "-1", "inf", "-inf", "x", ""]
BAD_POSITIVE_FLOAT = ["0", "nan", "-2", "inf", "x"]
DECODING = {
    "--beam-size": BAD_POSITIVE_INT,
    "--alpha": BAD_NON_NEGATIVE_FLOAT,
    "--max-extra-length": BAD_NON_NEGATIVE_INT,
}
# Beyond the export's record (max_beam_size 2, extra length limit 50).
EXPORT_LIMITS = {
    "--beam-size": ["3", "999"],
    "--max-extra-length": ["51", "100000"],
    "--n-best": ["3", "9"],
}
TRANSLATE = {
    **DECODING,
    "--n-best": BAD_POSITIVE_INT,
    "--batch-size": BAD_POSITIVE_INT,
    "--batch-tokens": BAD_POSITIVE_INT,
}
CKPT = "checkpoints/ckpt-00000015"
RUN_FILES = ["recipe.json", f"{CKPT}.weights.h5", f"{CKPT}.json", "tokenizer.model"]
EXPORT_FILES = [
    "export/1/assets.extra/record.json",
    "export/1/saved_model.pb",
    "export/1/variables/variables.data-00000-of-00001",
]
COMMANDS = {  # argv (RUN, EXPORT, INPUT filled in), bad options, damageable files
    "average": (
        ["average", "--run-dir", "RUN"],
        {"--last": BAD_POSITIVE_INT},
        RUN_FILES[:3],
    ),
    "evaluate": (
        ["evaluate", "--run-dir", "RUN"],
        {**DECODING, "--limit": BAD_POSITIVE_INT},
        RUN_FILES,
    ),
    "export": (
        ["export", "--run-dir", "RUN", "--tf-text-version", "none"],
        {"--version": BAD_POSITIVE_INT, "--tf-text-version": ["2.x", "", "v2"]},
        RUN_FILES,
    ),
    "translate-run": (
        ["translate", "--run-dir", "RUN", "--input", "INPUT"],
        TRANSLATE,
        [*RUN_FILES, "INPUT"],
    ),
    "translate-export": (
        ["translate", "--export", "EXPORT", "--input", "INPUT"],
        {**TRANSLATE, **EXPORT_LIMITS},
        [*EXPORT_FILES, "INPUT"],
    ),
    "attention": (
        ["attention", "--run-dir", "RUN", "--sentence", "Hi.", "--png", "OUT.png"],
        {"--layer": ["x", "1.5"], "--kind": ["self", ""]},
        RUN_FILES,
    ),
    "prepare": (
        ["prepare", "--recipe", "demo", "--run-dir", "RUN"],
        {"--max-length-ratio": BAD_POSITIVE_FLOAT, "--on-bad-line": ["ignore"]},
        ["recipe.json"],
    ),
    "train": (
        ["train", "--recipe", "demo", "--run-dir", "RUN"],
        {"--train-steps": BAD_POSITIVE_INT, "--train-minutes": BAD_POSITIVE_FLOAT},
        ["recipe.json"],
    ),
    "evalb": (["evalb", "GOLD", "TEST"], {"--prm": ["MISSING"]}, ["GOLD", "TEST"]),
    "recipes": (["recipes"], {}, []),
}
DAMAGES = ["empty", "binary", "truncated", "folder", "invalid utf-8", "missing"]


@pytest.fixture(scope="module")
def fuzz_base(exported_run, tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzz")
    (base / "input.txt").write_text("Hello world.\nA second line.\n")
    (base / "gold.txt").write_text("(S (NP (DT The) (NN cat)) (VP (VBZ sits)))\n")
    return exported_run, base


def _snapshot(folder):
    return {
        os.path.join(root, name): os.stat(os.path.join(root, name)).st_mtime_ns
        for root, _, names in os.walk(folder)
        for name in names
    }


def _damage(path, damage, fraction, noise):
    data = open(path, "rb").read() if os.path.isfile(path) else b""
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)  # a hard link: the shared original stays as it was
    if damage == "missing":
        return
    if damage == "folder":
        os.makedirs(path)
        return
    content = {
        "empty": b"",
        "binary": noise,
        "truncated": data[: int(len(data) * fraction)],
        "invalid utf-8": b"\xff\xfe" + data[:64],
    }[damage]
    with open(path, "wb") as file:
        file.write(content)


@st.composite
def cases(draw):
    name = draw(st.sampled_from(sorted(COMMANDS)))
    argv, options, files = COMMANDS[name]
    faults = []
    if options and draw(st.booleans()):
        option = draw(st.sampled_from(sorted(options)))
        faults.append(("option", option, draw(st.sampled_from(options[option]))))
    if files and (not faults or draw(st.booleans())):
        target = draw(st.sampled_from(files))
        # Without the newest checkpoint the one before is used, its record is
        # optional, and prepare/train make a missing recipe: no faults.
        optional = target.startswith(CKPT) or name in ("prepare", "train")
        damages = DAMAGES[:-1] if optional else DAMAGES
        if target == "INPUT":  # empty or cut text is still text to translate
            damages = ["folder", "invalid utf-8", "missing"]
        faults.append(
            (
                "file",
                target,
                draw(st.sampled_from(damages)),
                draw(st.floats(0.0, 0.9)),
                draw(st.binary(min_size=1, max_size=256)),
            )
        )
    if not faults or draw(st.integers(0, 9)) == 0:
        junk = draw(st.text(min_size=1, max_size=12).filter(lambda t: "\0" not in t))
        faults.append(("argument", f"--{junk}"))
    return name, list(argv), faults


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=cases())
def test_generated_bad_input_gives_one_line_and_status_2(fuzz_base, case):
    source_run, base = fuzz_base
    name, argv, faults = case
    before = _snapshot(source_run), _snapshot(base)
    work = tempfile.mkdtemp(dir=base, prefix="case-")
    try:
        run_dir = os.path.join(work, "run")
        shutil.copytree(source_run, run_dir, copy_function=os.link)
        paths = {
            "RUN": run_dir,
            "EXPORT": os.path.join(run_dir, "export", "1"),
            "INPUT": os.path.join(work, "input.txt"),
            "GOLD": os.path.join(work, "gold.txt"),
            "TEST": os.path.join(work, "test.txt"),
            "OUT.png": os.path.join(work, "out.png"),
            "MISSING": os.path.join(work, "missing.prm"),
        }
        shutil.copy(base / "input.txt", paths["INPUT"])
        shutil.copy(base / "gold.txt", paths["GOLD"])
        shutil.copy(base / "gold.txt", paths["TEST"])
        argv = [paths.get(item, item) for item in argv]
        for fault in faults:
            if fault[0] == "option":
                argv += [fault[1], paths.get(fault[2], fault[2])]
            elif fault[0] == "argument":
                argv.append(fault[1])
            else:
                _, target, damage, fraction, noise = fault
                path = paths.get(target) or os.path.join(run_dir, target)
                _damage(path, damage, fraction, noise)
        if name in ("translate-run", "translate-export"):
            argv += ["--output", os.path.join(work, "out.txt")]
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                status = cli.main(argv)
            except SystemExit as exit_info:  # argparse: refused when parsed
                status = exit_info.code
        message = err.getvalue()
        assert "Traceback" not in message, (argv, message)
        allowed = (0, 2) if name in ("recipes", "evalb") else (2,)
        assert status in allowed, (argv, status, message)
        if status == 2:
            assert len(message.strip().splitlines()) == 1, (argv, message)
            assert message.startswith("keras-transformer"), message
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert (_snapshot(source_run), _snapshot(base)) == before, argv
