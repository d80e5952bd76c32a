"""The command line starts quietly: no TensorFlow start-up lines or library
warnings on stderr unless `--verbose`, and errors still reach stderr."""

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
)

CONSOLE_SCRIPT = "import sys; from keras_transformer.cli import main; sys.exit(main())"


def _python(code):
    """`python -c code` in the repository root."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO
    )


def _run(*argv):
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    return subprocess.run(
        # What the `keras-transformer` console script runs.
        [sys.executable, "-c", CONSOLE_SCRIPT, *argv],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=300,
    )


@pytest.fixture(scope="module")
def listed():
    """`recipes` in a fresh process, without --verbose (run once: each
    process imports TensorFlow)."""
    return _run("recipes")


def test_default_stderr_is_empty_and_errors_still_show(listed):
    assert listed.returncode == 0
    assert "demo" in listed.stdout
    assert listed.stderr == ""
    failed = _run("recipes", "no_such_recipe")
    assert failed.returncode == 2
    # The one-line user error, after TensorFlow's import restored stderr.
    assert len(failed.stderr.strip().splitlines()) == 1, failed.stderr
    assert "no_such_recipe" in failed.stderr


def test_verbose_keeps_what_tensorflow_prints(listed):
    verbose = _run("--verbose", "recipes")
    assert verbose.returncode == 0
    assert verbose.stdout == listed.stdout
    # TensorFlow logs at start-up on every platform (oneDNN, CUDA or CPU
    # feature lines); only --verbose lets them through.
    assert verbose.stderr.strip()


def test_importing_the_package_does_not_import_tensorflow():
    code = (
        "import sys, keras_transformer\n"
        "assert 'tensorflow' not in sys.modules, 'imported early'\n"
        "from keras_transformer import Transformer, TransformerConfig, layers\n"
        "assert keras_transformer.PAD_ID == 0\n"
        "assert 'tensorflow' in sys.modules\n"
        "assert {'Transformer', 'layers'} <= set(dir(keras_transformer))\n"
        "try:\n"
        "    keras_transformer.no_such_name\n"
        "except AttributeError as error:\n"
        "    assert 'no_such_name' in str(error)\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr


def test_what_translate_and_parse_load_leaves_tensorflow_datasets_out():
    # `pipelines` imports TFDS only where a TFDS dataset is read
    # (`load_tfds`): its import is part of every `translate` and `parse`
    # process's start-up otherwise.
    code = (
        "import sys\n"
        "import keras_transformer.cli.decoding_commands\n"
        "import keras_transformer.runs.loaded_run\n"
        "import keras_transformer.translation.translator\n"
        "import keras_transformer.parsing.parser\n"
        "import pipelines, savedmodels\n"
        "assert 'tensorflow' in sys.modules\n"
        "assert 'tensorflow_datasets' not in sys.modules, 'TFDS imported'\n"
        "from pipelines import load_tfds\n"
        "try:\n"
        "    load_tfds('no_such_dataset_name')\n"
        "except Exception:\n"
        "    pass\n"
        "assert 'tensorflow_datasets' in sys.modules\n"
    )
    result = _python(code)
    assert result.returncode == 0, result.stderr[-2000:]


def test_an_in_process_call_leaves_warnings_and_loggers_as_they_were(capsys):
    import warnings

    import tensorflow as tf

    from keras_transformer import cli

    logger = tf.get_logger()
    logger.setLevel("INFO")
    filters = list(warnings.filters)
    assert cli.main(["recipes"]) == 0
    assert "demo" in capsys.readouterr().out
    assert logger.level == 20  # INFO, as set above
    assert warnings.filters == filters


NATIVE_LINES = (
    "import os, sys\n"
    "from keras_transformer.cli.startup import native_log_filter\n"
    "with native_log_filter(verbose={verbose}):\n"
    "    os.write(2, b'E0000 00:00:1796235919.963869   10729 cuda_platform.cc:52] "
    "failed call to cuInit\\n')\n"
    "    os.write(2, b'I0000 00:00:1796.1 7 port.cc:153] oneDNN notes\\n')\n"
    "    os.write(2, b'WARNING: All log messages before absl::InitializeLog() is "
    "called are written to STDERR\\n')\n"
    "    os.write(2, b'F0000 00:00:1796.2 7 check.cc:9] Check failed: x\\n')\n"
    "    print('a Python error line', file=sys.stderr)\n"
    "    {end}\n"
    "print('after', file=sys.stderr)\n"
)


def _native(verbose, end="pass"):
    return _python(NATIVE_LINES.format(verbose=verbose, end=end))


def test_native_log_lines_are_dropped_and_everything_else_passes():
    result = _native(False)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        "F0000 00:00:1796.2 7 check.cc:9] Check failed: x",
        "a Python error line",
        "after",
    ]
    assert len(_native(True).stderr.splitlines()) == 6  # --verbose: all


def test_what_was_written_before_a_crash_still_shows():
    result = _native(False, end="os.abort()")
    assert result.returncode != 0
    assert result.stderr.splitlines()[-2:] == [
        "F0000 00:00:1796.2 7 check.cc:9] Check failed: x",
        "a Python error line",
    ]


def test_translate_and_parse_start_without_jax_and_matplotlib():
    code = (
        "import sys\n"
        "from keras_transformer.cli.startup import import_tensorflow_quietly\n"
        "import_tensorflow_quietly(without=('jax', 'matplotlib'))\n"
        "import keras\n"
        "assert not {'jax', 'matplotlib'} & set(sys.modules), 'imported'\n"
        "import matplotlib.pyplot  # importable again afterwards\n"
    )
    env = {**os.environ, "KERAS_BACKEND": "tensorflow"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stderr[-2000:]


def test_the_keras_backends_own_package_is_never_kept_out(tmp_path):
    from keras_transformer.cli.main import LEAN_COMMANDS
    from keras_transformer.cli.startup import LEAN_IMPORTS, lean_imports

    assert LEAN_COMMANDS == ("translate", "parse")
    assert lean_imports(LEAN_IMPORTS, {"KERAS_BACKEND": "tensorflow"}) == (
        "jax",
        "matplotlib",
    )
    assert lean_imports(LEAN_IMPORTS, {"KERAS_BACKEND": "jax"}) == ("matplotlib",)
    (tmp_path / "keras.json").write_text('{"backend": "jax"}')
    assert lean_imports(LEAN_IMPORTS, {"KERAS_HOME": str(tmp_path)}) == ("matplotlib",)
    empty = {"KERAS_BACKEND": "", "KERAS_HOME": str(tmp_path)}  # Keras ignores it
    assert lean_imports(LEAN_IMPORTS, empty) == ("matplotlib",)
    assert lean_imports(LEAN_IMPORTS, {"KERAS_HOME": str(tmp_path / "no")}) == (
        "jax",
        "matplotlib",
    )
