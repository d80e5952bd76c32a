"""Faults that lose nothing: a full disk, a SIGKILL, two writers on one run."""

import os
import signal
import subprocess
import sys
import textwrap

import keras
import pytest

from keras_transformer import cli
from keras_transformer.training.atomic_files import (
    atomic_save_weights,
    atomic_write_json,
)
from tests.keras_transformer.cli.conftest import copy_run, user_error

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


@pytest.fixture
def small_disk(tmp_path):
    """A 96 KiB tmpfs mounted for the test (we run as root)."""
    mount = tmp_path / "small_disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"Cannot mount a small tmpfs here: {done.stderr.strip()}")
    yield mount
    # Lazy: a file a failed write left open (h5py) must not keep it mounted.
    subprocess.run(["umount", "--lazy", str(mount)], check=False)


def _model(units):
    model = keras.Sequential([keras.Input((units,)), keras.layers.Dense(units)])
    return model


def test_disk_full_writing_a_checkpoint_keeps_the_previous_one(small_disk):
    path = small_disk / "ckpt.weights.h5"
    atomic_save_weights(_model(8), str(path))  # fits
    before = path.read_bytes()
    with pytest.raises(OSError) as info:
        atomic_save_weights(_model(256), str(path))  # 256 KiB of weights
    assert info.value.filename == str(path) and "disk is full" in str(info.value)
    assert path.read_bytes() == before and os.listdir(small_disk) == [path.name]
    with pytest.raises(OSError, match="disk is full"):
        atomic_write_json({"x": "y" * 200_000}, str(small_disk / "r.json"))
    assert os.listdir(small_disk) == [path.name]


def test_disk_full_during_average_and_export(tiny_run, tmp_path, small_disk, capsys):
    run_dir = copy_run(tiny_run, tmp_path / "run")
    for name in ("averaged", "export"):
        (small_disk / name).mkdir()
        os.symlink(small_disk / name, run_dir / name)
    (small_disk / "filler").write_bytes(b"\0" * 40_000)  # ~50 KiB left
    err = user_error(["average", "--run-dir", str(run_dir)], capsys)
    assert "the disk is full" in err and "files written before are intact" in err
    assert os.listdir(small_disk / "averaged") == []
    argv = ["export", "--run-dir", str(run_dir), "--tf-text-version", "none"]
    err = user_error(argv, capsys)
    assert "the disk is full" in err and os.listdir(small_disk / "export") == []
    # The checkpoints are intact: with space again, both succeed.
    os.remove(small_disk / "filler")
    os.remove(run_dir / "averaged")
    assert cli.main(["average", "--run-dir", str(run_dir)]) == 0


def _killed_at_publish(argv):
    """Runs the command in a subprocess that SIGKILLs itself at the rename
    that publishes its result: everything written, nothing published."""
    code = textwrap.dedent(
        f"""
        import os, signal, sys
        sys.path.insert(0, {REPO!r})
        os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)
        from keras_transformer import cli
        cli.main({argv!r})
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()[-2000:]


@pytest.mark.slow
def test_killed_average_and_export_publish_nothing_and_run_again(
    tiny_run, tmp_path, capsys
):
    run_dir = copy_run(tiny_run, tmp_path / "run")
    _killed_at_publish(["average", "--run-dir", str(run_dir)])
    assert not list((run_dir / "averaged").glob("*.weights.h5"))
    assert cli.main(["average", "--run-dir", str(run_dir)]) == 0
    assert len(list((run_dir / "averaged").glob("*.weights.h5"))) == 1
    argv = ["export", "--run-dir", str(run_dir), "--tf-text-version", "none"]
    _killed_at_publish(argv)
    names = os.listdir(run_dir / "export")
    assert not [name for name in names if name.isdigit()]  # TF Serving sees none
    assert cli.main(argv) == 0
    assert (run_dir / "export" / "1" / "saved_model.pb").exists()


def test_a_second_writer_on_a_run_directory_is_refused_naming_the_first(
    tmp_path, capsys
):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; sys.path.insert(0, sys.argv[1]);"
            "from keras_transformer.runs.run_lock import run_lock\n"
            "with run_lock(sys.argv[2]):\n print('held', flush=True); time.sleep(60)",
            REPO,
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        for command in ("prepare", "train"):
            argv = [command, "--recipe", "demo", "--run-dir", str(tmp_path)]
            err = user_error(argv, capsys)
            assert f"in use by another process (pid {holder.pid}" in err
    finally:
        holder.kill()
        holder.wait()
    # The lock goes with its process, even a killed one.
    from keras_transformer.runs.run_lock import run_lock

    with run_lock(str(tmp_path)), run_lock(str(tmp_path)):  # re-entrant
        assert (tmp_path / ".lock").read_text().strip() == str(os.getpid())
