"""A tiny run trained once through the command line, shared by the CLI tests.

The `demo` recipe with the bundled 300-pair fixture for data and a 1-layer,
d_model 32 model, so that every subcommand runs in seconds on a CPU.
"""

import pytest

from keras_transformer import cli

TINY = [
    "dataset=fixture",
    "train_split=all",
    "dev_split=all",
    "test_split=all",
    "vocab_size=600",
    "model.num_layers=1",
    "model.d_model=32",
    "model.d_ff=64",
    "model.num_heads=2",
    "tokens_per_batch=512",
    "max_tokens_per_replica=512",
    "steps_per_epoch=5",
    "checkpoint_every_steps=5",
    "checkpoint_every_minutes=null",
    "warmup_steps=10",
    "train_minutes=null",
    "decoding.beam_size=2",
    "max_beam_size=2",  # two searches traced at export instead of eight
    # The recipes train in "auto"; the tests in float32 on every CPU.
    "precision=float32",
]


TINY_PARSER = [
    "vocab_size=600",
    "model.num_layers=1",
    "model.num_encoder_layers=2",  # unequal depths, as the recipe's
    "model.d_model=32",
    "model.d_ff=64",
    "model.num_heads=2",
    "tokens_per_batch=1024",
    "max_tokens_per_replica=1024",
    "steps_per_epoch=5",
    "checkpoint_every_steps=5",
    "checkpoint_every_minutes=null",
    "warmup_steps=10",
    "train_minutes=null",
    "decoding.beam_size=2",
    "decoding.max_extra_length=40",
    "max_beam_size=2",
    # The recipes train in "auto"; the tests in float32 on every CPU.
    "precision=float32",
]


def user_error(argv, capsys):
    """Runs `argv`, checks it failed as a user error (exit 2, one line on
    stderr, no traceback) and returns the line."""
    status = cli.main(argv)
    err = capsys.readouterr().err
    assert status == 2
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    return err


def tiny_arguments(*extra):
    """`--set` arguments of the tiny recipe, plus `extra` KEY=VALUE pairs."""
    return [item for pair in (*TINY, *extra) for item in ("--set", pair)]


def _train_tiny_run(run_dir):
    status = cli.main(
        ["train", "--recipe", "demo", "--run-dir", str(run_dir), "--train-steps", "15"]
        + tiny_arguments()
    )
    assert status == 0


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory):
    """A run directory after `train --recipe demo` for 15 updates, trained once
    per test run (`tests/shared_build.py`): read-only, tests that write into a
    run copy it first (`copy_run`)."""
    from tests.shared_build import build_once

    return build_once(tmp_path_factory, "tiny_run", _train_tiny_run)


# What a copy of the tiny run needs to be read (the training cache is left
# out: only `train` reads it).
RUN_FILES = ("recipe.json", "tokenizer.model", "checkpoints", "backup")


def copy_run(run_dir, target):
    """A copy of `run_dir`'s recipe, tokenizer, checkpoints and backup in
    `target`, for tests that damage or write into a run."""
    import shutil

    target.mkdir(parents=True, exist_ok=True)
    for name in RUN_FILES:
        source = run_dir / name
        if source.is_dir():
            shutil.copytree(source, target / name)
        elif source.exists():
            shutil.copy2(source, target / name)
    return target


@pytest.fixture(scope="session")
def exported_run(tiny_run, tmp_path_factory):
    """A copy of the tiny run, exported once per test run (`export/1`, no op
    check); tests copy it again before damaging anything."""
    from tests.shared_build import build_once

    def export(folder):
        run_dir = copy_run(tiny_run, folder / "run")
        argv = ["export", "--run-dir", str(run_dir), "--tf-text-version", "none"]
        assert cli.main(argv) == 0

    return build_once(tmp_path_factory, "exported_run", export) / "run"


def _train_parsing_run(folder):
    run_dir = folder / "run"
    sets = [item for pair in TINY_PARSER for item in ("--set", pair)]
    command = ["train", "--recipe", "gum_parsing", "--run-dir", str(run_dir)]
    assert cli.main(command + ["--train-steps", "10"] + sets) == 0
    assert cli.main(["average", "--run-dir", str(run_dir)]) == 0


@pytest.fixture(scope="session")
def shared_parsing_run(tmp_path_factory):
    """A tiny `gum_parsing` run, trained for 10 updates and averaged once per
    test run; read-only (tests that write into it copy it first)."""
    from tests.shared_build import build_once

    return build_once(tmp_path_factory, "parsing_run", _train_parsing_run) / "run"
