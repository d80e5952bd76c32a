"""The code examples of the README and of the documentation's pages run (each
block that is self-contained), read as one text in the site's order."""

import ast
import gzip
import io
import json
import pathlib
import re
import shlex

import numpy as np
import pytest
import tensorflow_datasets as tfds
import yaml

from keras_transformer import cli
from tests.keras_transformer.cli.conftest import (  # noqa: F401 (fixtures)
    shared_parsing_run,
    tiny_run,
)
from tests.keras_transformer.models.parameter_count import config_count

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _guide_pages():
    """The getting-started page and the guides, in the site's order (its nav in
    mkdocs.yml): a later block may use what an earlier one of its page
    defined."""
    nav = yaml.safe_load((README.parent / "mkdocs.yml").read_text())["nav"]
    entries = {key: value for item in nav for key, value in item.items()}
    guides = [page for item in entries["Guides"] for page in item.values()]
    return [entries["Getting started"], *guides]


def _documentation():
    pages = [README.parent / "docs" / name for name in _guide_pages()]
    return "\n".join(path.read_text("utf-8") for path in [README, *pages])


def _python_blocks():
    return re.findall(r"```python\n(.*?)```", _documentation(), flags=re.S)


def test_every_import_in_the_readme_works():
    # Each import statement of the README's Python blocks (multi-line
    # parenthesised ones included), run on its own.
    statements = []
    for block in _python_blocks():
        tree = ast.parse(block)
        statements += [
            ast.get_source_segment(block, node)
            for node in tree.body
            if isinstance(node, (ast.Import, ast.ImportFrom))
        ]
    assert len(statements) >= 8
    for statement in statements:
        exec(statement, {})


def test_library_examples_translate_and_parse(tiny_run, shared_parsing_run):  # noqa: F811
    # "Use it as a library" opens with them; the demos' runs stand in for
    # the tiny runs of the tests.
    blocks = _python_blocks()
    (translate,) = [b for b in blocks if "Translator.from_run(" in b]
    (parse,) = [b for b in blocks if "Parser.from_run(" in b]
    assert blocks.index(translate) < blocks.index(parse) < len(blocks) // 2
    names = {}
    exec(translate.replace("keras-transformer-demo", str(tiny_run)), names)
    translations = names["translator"].translate(["Open the file.", ""])
    assert len(translations) == 2 and translations[1] == ""
    exec(parse.replace("runs/gum-demo", str(shared_parsing_run)), names)
    (tree,) = names["parser"].parse(["The cat sat on the mat ."])
    assert " ".join(tree.words()) == "The cat sat on the mat ."


def test_layer_reuse_example_builds_a_working_model():
    (block,) = [b for b in _python_blocks() if "classifier = keras.Model" in b]
    namespace = {}
    exec(block, namespace)
    classifier = namespace["classifier"]
    ids = np.array([[5, 6, 7, 0], [8, 9, 0, 0]], "int32")
    assert tuple(classifier(ids).shape) == (2, 2)


class _CountedModel:
    """Stands in for `build_transformer(config)`: its parameter count from the
    config by the paper's formula, which the built models' count is tested
    against (tests/keras_transformer/models/test_builder.py)."""

    def __init__(self, config):
        self.config = config

    def count_params(self):
        return config_count(self.config)


def test_model_example_parameter_count_is_true(monkeypatch):
    (block,) = [b for b in _python_blocks() if "count_params()" in b]
    assert "63,082,496" in block
    setup = block.split("logits =")[0]
    assert "model = build_transformer(config)" in setup
    # The 63M-parameter model is not built: building it is tested elsewhere.
    monkeypatch.setattr("keras_transformer.build_transformer", _CountedModel)
    namespace = {}
    exec(
        setup.replace("model.count_params()", "count = model.count_params()"), namespace
    )
    assert namespace["count"] == 63_082_496
    assert namespace["config"].source_vocab_size == 37_000


def test_decoding_example_runs_on_a_tiny_model():
    (block,) = [b for b in _python_blocks() if "model.init_cache(" in b]
    from keras_transformer import TransformerConfig, build_transformer

    model = build_transformer(
        TransformerConfig(
            num_layers=1, d_model=16, d_ff=32, num_heads=2, source_vocab_size=40
        )
    )
    namespace = {
        "model": model,
        "source_ids": np.array([[5, 6, 7, 3], [8, 9, 3, 0]], "int32"),
        "next_ids": np.full((2, 1), 2, "int32"),
        "index": 0,
    }
    exec(block, namespace)
    # The last translate call is the greedy one: one hypothesis per sentence.
    assert np.asarray(namespace["ids"]).shape[:2] == (2, 1)
    assert tuple(namespace["logits"].shape) == (2, 1, 40)
    assert len(namespace["self_caches"]) == 1


def test_first_two_commands_are_demo_then_tests():
    commands = re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S)
    assert "keras-transformer demo" in commands[0]
    assert "pytest" in commands[1]
    ci = (README.parent / ".ci" / "run").read_text()
    test_command = commands[1].split("&& ", 2)[-1].strip()
    assert test_command in ci


def _cli_lines():
    """The `keras-transformer ...` commands of the README's bash blocks, as argv
    lists (an `echo ... |` prefix becomes the command's stdin)."""
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", _documentation(), flags=re.S):
        for line in block.strip().splitlines():
            stdin = None
            if line.startswith("echo ") and "| keras-transformer" in line:
                echo, line = line.split(" | ", 1)
                stdin = shlex.split(echo)[1] + "\n"
            if "keras-transformer " not in line:
                continue
            tokens = shlex.split(line.split("&& ")[-1])
            while tokens and "=" in tokens[0]:  # VAR=value environment prefixes
                tokens = tokens[1:]
            if tokens[:1] == ["keras-transformer"]:
                lines.append((tokens[1:], stdin))
    return lines


def test_every_readme_command_parses():
    lines = _cli_lines()
    assert len(lines) >= 8
    parser = cli.build_parser()
    for argv, _ in lines:
        parser.parse_args(argv)  # exits on an unknown option


# Shrinks the WMT recipe for the mock-data run below: the same commands and
# code paths with a 2-layer, d_model 16 model and a 300-token vocabulary (the
# full-size settings are tested in tests/keras_transformer/test_recipes.py).
SHRINK = [
    "tokenizer_sample_pairs=40",
    "vocab_size=300",
    "model.num_layers=2",
    "model.d_model=16",
    "model.d_ff=16",
    "model.num_heads=2",
    "tokens_per_batch=256",
    "max_tokens_per_replica=256",
    "max_train_length=64",
    "steps_per_epoch=2",
    "checkpoint_every_steps=2",
    "max_beam_size=4",  # the README's beam 4; four searches traced at export
]


@pytest.mark.slow
def test_readme_wmt_commands_run_on_mock_data(tmp_path, monkeypatch, capsys):
    """The one-GPU command sequence, verbatim except for `--set` shrink options
    on `train` and TFDS mock data. The strategy variants (mirrored, multi_worker,
    tpu) need several devices or machines: only their parsing is tested above;
    the strategies themselves are tested in tests/keras_transformer/training."""
    monkeypatch.chdir(tmp_path)
    sequence = [
        (argv, stdin)
        for argv, stdin in _cli_lines()
        if "runs/ende_base" in " ".join(argv)
    ]
    assert [argv[0] for argv, _ in sequence] == [
        "train",
        "average",
        "evaluate",
        "export",
        "translate",
        "attention",
    ]
    with tfds.testing.mock_data(num_examples=12):
        for argv, stdin in sequence:
            if argv[0] == "train":
                argv = argv + ["--train-steps", "4"]
                argv += [x for pair in SHRINK for x in ("--set", pair)]
            if argv[0] == "evaluate":
                argv = argv + ["--limit", "3"]
            if stdin is not None:
                monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
            assert cli.main(argv) == 0, argv
    translation = capsys.readouterr().out.splitlines()[-1]
    assert isinstance(translation, str)
    assert (tmp_path / "runs/ende_base/export/1/saved_model.pb").exists()
    assert (tmp_path / "runs/ende_base/eval/test.json").exists()
    assert (tmp_path / "attention.png").read_bytes()[:4] == b"\x89PNG"


def _shorten(path, lines):
    """Keeps the first `lines` lines of a (gzipped) text file."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        kept = [line for _, line in zip(range(lines), f, strict=False)]
    with opener(path, "wt", encoding="utf-8") as f:
        f.writelines(kept)


def test_readme_own_data_example_runs(tmp_path, monkeypatch):
    """The "Train on your own data" example: its Python block writes the files,
    then its commands run verbatim, with the tiny model's `--set` options and
    4 updates added to the first `train` (one epoch of 5) and 10 to the second
    (the short form, which continues the run), on the files cut to a few
    hundred lines."""
    from tests.keras_transformer.cli.conftest import tiny_arguments

    monkeypatch.chdir(tmp_path)
    (block,) = [b for b in _python_blocks() if 'os.makedirs("mine"' in b]
    exec(block, {})
    for name, lines in [("train.en.gz", 300), ("train.fr.gz", 300), ("dev.tsv", 5)]:
        _shorten(tmp_path / "mine" / name, lines)
    _shorten(tmp_path / "mine" / "test.en.gz", 6)
    _shorten(tmp_path / "mine" / "test.fr.gz", 6)
    sequence = [argv for argv, _ in _cli_lines() if "runs/mine" in " ".join(argv)]
    assert [argv[0] for argv in sequence] == [
        "train",
        "train",
        "average",
        "evaluate",
        "export",
        "translate",
    ]
    for argv in sequence:
        if argv[0] == "train" and "--recipe" in argv:
            argv = argv + ["--train-steps", "4"] + tiny_arguments()
        elif argv[0] == "train":  # the short form continues the same run
            assert argv[1:3] == ["--run-dir", "runs/mine"] and len(argv) == 5
            argv = argv + ["--train-steps", "10"]
        assert cli.main(argv) == 0, argv
    backup = json.loads((tmp_path / "runs/mine/backup/backup.json").read_text())
    assert backup["step"] == 10  # from 5: the first ran one 5-update epoch
    scores = json.loads((tmp_path / "runs/mine/eval/test.json").read_text())
    assert scores["sentences"] == 6 and "tok:13a" in scores["bleu_signature"]
    translated = (tmp_path / "mine/test.translated.fr").read_text(encoding="utf-8")
    assert translated.count("\n") == 6
