"""`saved_model_cli` on the export: `show --all` lists the signatures and
`run` on `serving_default` gives what `tf.saved_model.load` gives.

`saved_model_cli` must have the tensorflow-text ops registered (the graph has
SentencePiece ops), and the console script does not import tensorflow_text:
its `run` fails with "Op type not registered 'SentencepieceOp'" and `show
--all` cannot list the concrete functions. So it is run as

    python -c "import sys, tensorflow_text; \\
        from tensorflow.python.tools.saved_model_cli import main; \\
        sys.argv[0] = 'saved_model_cli'; sys.exit(main())" \\
        run --dir exports/ende/1 --tag_set serve \\
        --signature_def serving_default --input_exprs 'text=["Hello world."]'

`run` loads the SavedModel the TF1 way, into a session, as TF Serving does,
so it also checks that the export restores its variables there.

The three commands run in parallel subprocesses (module fixture).
"""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from tests.markers import tensorflow_only

pytestmark = [
    pytest.mark.slow,
    tensorflow_only("SavedModel export needs the TensorFlow backend."),
]

# saved_model_cli with the tensorflow-text ops registered; arguments follow.
SAVED_MODEL_CLI = (
    "import sys, tensorflow_text; "
    "from tensorflow.python.tools.saved_model_cli import main; "
    "sys.argv[0] = 'saved_model_cli'; sys.exit(main())"
)
TEXTS = ["The Schedule Library", "Hello world.", ""]


@pytest.fixture(autouse=True)
def _seed_and_policy():
    """Replaces tests/conftest.py's fixture of this name for this file:
    nothing here is random, and seeding clears TensorFlow's kernel cache."""
    yield


@pytest.fixture(scope="module")
def cli(tiny_export, tmp_path_factory):
    path = tiny_export["path"]
    outdir = tmp_path_factory.mktemp("cli_outputs")
    texts = ", ".join(repr(t) for t in TEXTS)
    run_args = [
        "run",
        "--dir",
        path,
        "--tag_set",
        "serve",
        "--signature_def",
        "serving_default",
        "--input_exprs",
        f"text=[{texts}]",
    ]
    commands = {
        "show": [sys.executable, "-c", SAVED_MODEL_CLI, "show", "--dir", path, "--all"],
        "run": [
            sys.executable,
            "-c",
            SAVED_MODEL_CLI,
            *run_args,
            "--outdir",
            str(outdir),
        ],
    }
    # The console script, without tensorflow_text: shows why the wrapper.
    script = shutil.which("saved_model_cli", path=os.path.dirname(sys.executable))
    if script is not None:
        commands["plain_run"] = [script, *run_args]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    processes = {
        name: subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name, command in commands.items()
    }
    results = {}
    for name, process in processes.items():
        stdout, stderr = process.communicate(timeout=600)
        results[name] = (process.returncode, stdout, stderr)
    return {"path": path, "outdir": outdir, "results": results}


def test_show_all_lists_the_signatures(cli):
    returncode, stdout, stderr = cli["results"]["show"]
    assert returncode == 0, stderr[-3000:]
    for name in ("serving_default", "translate", "translate_ids", "translate_beam_1"):
        assert f"signature_def['{name}']:" in stdout
    assert "inputs['text'] tensor_info:" in stdout
    assert "outputs['translations'] tensor_info:" in stdout
    assert "outputs['scores'] tensor_info:" in stdout
    assert "inputs['source_ids'] tensor_info:" in stdout
    assert "Method name is: tensorflow/serving/predict" in stdout
    # With the tensorflow-text ops registered, the functions can be listed.
    assert "Concrete Functions:" in stdout
    assert "could not be listed" not in stdout


def test_run_serving_default_equals_tf_saved_model_load(cli):
    returncode, stdout, stderr = cli["results"]["run"]
    assert returncode == 0, stderr[-3000:]
    assert "Result for output key translations:" in stdout
    translations = np.load(cli["outdir"] / "translations.npy", allow_pickle=True)
    scores = np.load(cli["outdir"] / "scores.npy")
    assert translations.shape == (len(TEXTS), 1) and scores.shape == (len(TEXTS), 1)
    loaded = tf.saved_model.load(cli["path"])
    expected = loaded.signatures["serving_default"](text=tf.constant(TEXTS))
    np.testing.assert_array_equal(translations, expected["translations"].numpy())
    np.testing.assert_allclose(scores, expected["scores"].numpy(), atol=1e-5, rtol=1e-6)
    assert translations[2, 0] == b"" and scores[2, 0] == 0.0


def test_the_console_script_lacks_the_tensorflow_text_ops(cli):
    if "plain_run" not in cli["results"]:
        pytest.skip("No saved_model_cli console script beside this Python.")
    returncode, _, stderr = cli["results"]["plain_run"]
    assert returncode != 0
    assert "Op type not registered 'SentencepieceOp'" in stderr
