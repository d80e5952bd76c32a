"""The command line starts quietly: no TensorFlow start-up lines or library
warnings on stderr unless `--verbose`, and errors still reach stderr."""

import os
import subprocess
import sys

REPO = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
)

CONSOLE_SCRIPT = "import sys; from keras_transformer.cli import main; sys.exit(main())"


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


def test_default_stderr_is_empty_and_errors_still_show():
    listed = _run("recipes")
    assert listed.returncode == 0
    assert "demo" in listed.stdout
    assert listed.stderr == ""
    failed = _run("recipes", "no_such_recipe")
    assert failed.returncode == 2
    # The one-line user error, after TensorFlow's import restored stderr.
    assert len(failed.stderr.strip().splitlines()) == 1, failed.stderr
    assert "no_such_recipe" in failed.stderr


def test_verbose_keeps_what_tensorflow_prints():
    quiet = _run("recipes")
    verbose = _run("--verbose", "recipes")
    assert verbose.returncode == 0
    assert verbose.stdout == quiet.stdout
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
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO
    )
    assert result.returncode == 0, result.stderr


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
