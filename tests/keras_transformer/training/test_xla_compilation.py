"""XLA training on static-shaped batches: the same loss as graph mode, empty
rows that change nothing, the persistent compilation cache across processes,
and the flags it sets."""

import json
import os
import pathlib
import re
import subprocess
import sys

import keras
import numpy as np
import pytest

from keras_transformer import TransformerConfig, build_transformer
from keras_transformer.training import (
    XlaCompileLog,
    compile_transformer,
    resolve_jit_compile,
    use_compilation_cache,
)
from keras_transformer.training.xla_compilation import CACHE_FLAG

ROOT = pathlib.Path(__file__).resolve().parents[3]


def _batch(rows, empty_rows=0, seed=0):
    """A static-shaped batch as the pipeline makes it: `rows` pairs of ragged
    lengths padded to 8 + 8 positions, then `empty_rows` all-padding rows."""
    rng = np.random.default_rng(seed)
    source = np.zeros((rows + empty_rows, 8), "int32")
    target_in = np.zeros((rows + empty_rows, 8), "int32")
    target_out = np.zeros((rows + empty_rows, 8), "int32")
    for row in range(rows):
        n, m = rng.integers(2, 8, 2)
        source[row, :n] = np.append(rng.integers(4, 40, n - 1), 3)
        words = rng.integers(4, 40, m - 1)
        target_in[row, :m] = np.append(2, words)
        target_out[row, :m] = np.append(words, 3)
    return {"source_ids": source, "target_ids": target_in}, target_out


def _losses(jit_compile, batch, steps=2):
    keras.utils.set_random_seed(1)
    model = build_transformer(
        TransformerConfig(
            num_layers=1, d_model=16, d_ff=32, num_heads=2, source_vocab_size=40
        )
    )
    compile_transformer(model, warmup_steps=2, jit_compile=jit_compile)
    return [float(model.train_on_batch(*batch)[0]) for _ in range(steps)]


def test_xla_and_graph_mode_give_the_same_loss_and_empty_rows_change_nothing():
    padded = _batch(6, empty_rows=2)
    graph, xla = _losses(False, padded), _losses(True, padded)
    np.testing.assert_allclose(xla, graph, rtol=0, atol=1e-5)
    # The second step's loss follows the first update: the updates agree too.
    assert graph[1] != graph[0]
    # Two empty rows (a filled partial batch) give the loss of the 6 pairs alone.
    alone = _losses(False, _batch(6))
    np.testing.assert_allclose(graph, alone, rtol=0, atol=1e-5)


def test_auto_is_graph_mode_on_cpus_and_explicit_values_pass_through():
    assert resolve_jit_compile("auto") is False  # this machine has CPUs only
    assert resolve_jit_compile(True) is True
    assert resolve_jit_compile(False) is False


def test_the_cache_flag_is_added_once_and_a_user_s_own_directory_wins(
    monkeypatch, tmp_path
):
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=0")
    directory = str(tmp_path / "cache")
    assert use_compilation_cache(directory) == directory
    assert os.environ["TF_XLA_FLAGS"] == f"--tf_xla_auto_jit=0 {CACHE_FLAG}={directory}"
    assert os.path.isdir(directory)
    assert use_compilation_cache(str(tmp_path / "other")) == directory
    assert os.environ["TF_XLA_FLAGS"].count(CACHE_FLAG) == 1


def test_the_log_counts_new_cache_files_as_compilations(tmp_path):
    log = XlaCompileLog(str(tmp_path), verbose=False)
    log.on_train_begin()
    logs = {}
    log.on_train_batch_begin(0)
    (tmp_path / "xla_compile_cache__1__2__XLA_CPU_JIT.pb").write_bytes(b"x")
    log.on_train_batch_end(0, logs)
    log.on_train_batch_begin(1)
    log.on_train_batch_end(1, logs)  # a step that loaded or reused it
    assert (log.compilations, log.cache_in_use) == (1, True)
    assert logs["xla_compile_s"] == log.compile_seconds > 0


def _train(run_dir, steps):
    """`keras-transformer train --xla on` on the tiny recipe, in a fresh
    process (TensorFlow reads the cache flag once per process)."""
    sys.path.insert(0, str(ROOT / "tests" / "keras_transformer" / "cli"))
    from conftest import tiny_arguments  # noqa: PLC0415

    argv = ["train", "--recipe", "demo", "--run-dir", str(run_dir), "--xla", "on"]
    argv += ["--train-steps", str(steps)]
    # Two bucket lengths per side (8, 96): a few batch shapes, each compiled
    # in seconds.
    argv += tiny_arguments("bucket_scale=12.0", "tokens_per_batch=1024")
    argv += ["--set", "max_tokens_per_replica=1024"]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    env.pop("TF_XLA_FLAGS", None)
    code = (
        f"import sys; from keras_transformer import cli; sys.exit(cli.main({argv!r}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout


@pytest.mark.slow
def test_a_resumed_run_loads_every_shape_from_the_compilation_cache(tmp_path):
    import shutil  # noqa: PLC0415

    from keras_transformer.recipes import Recipe  # noqa: PLC0415
    from keras_transformer.runs.batching_plan import batching_plan  # noqa: PLC0415
    from keras_transformer.runs.run_directory import RunDirectory  # noqa: PLC0415
    from keras_transformer.runs.training_cache import read_cache  # noqa: PLC0415
    from pipelines import batch_shapes  # noqa: PLC0415

    run_dir = tmp_path / "run"
    first = _train(run_dir, 5)
    run = RunDirectory(str(run_dir))
    recipe = Recipe.from_dict(json.loads((run_dir / "recipe.json").read_text()))
    config, _ = batching_plan(recipe, static=True)
    shapes = batch_shapes(read_cache(run), config)
    assert len(shapes) > 1 and f"XLA: {len(shapes)} batch shapes" in first
    shutil.copytree(run_dir / "backup", tmp_path / "backup_at_5")

    def compiled(output):
        return int(re.search(r"XLA: (\d+) batch shape\(s\) compiled", output)[1])

    def cache_files():
        return len(list((run_dir / "xla_cache").glob("xla_compile_cache__*.pb")))

    assert compiled(first) == cache_files() >= 1
    # Steps 5-10 resumed: new shapes may compile, those of steps 0-5 not.
    second = _train(run_dir, 10)
    cached = cache_files()
    assert compiled(second) == cached - compiled(first)
    assert cached <= len(shapes)  # each shape at most once, across processes
    # The same steps resumed again from the step-5 backup: nothing compiles.
    shutil.rmtree(run_dir / "backup")
    shutil.copytree(tmp_path / "backup_at_5", run_dir / "backup")
    third = _train(run_dir, 10)
    assert "XLA: 0 batch shape(s) compiled in this run, 0.0 s" in third
    assert cache_files() == cached
    assert "(step 10)" in third
