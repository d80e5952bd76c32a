"""A tiny parsing run (§6.3) through the command line: prepare and train on
the bundled GUM trees, average, evaluate by labelled bracket F1, parse
sentences from a file; translation commands refuse the run."""

import json
import os
import subprocess
import sys

import pytest

import pipelines
from keras_transformer import cli
from keras_transformer.package_cache import CACHE_ENV
from keras_transformer.parsing.parser import Parser
from keras_transformer.runs.compile_cache import is_whole_entry
from keras_transformer.runs.run_directory import RunDirectory
from keras_transformer.training.xla_compilation import CACHE_FILE_PREFIX
from keras_transformer.translation.translator import Translator
from tests.keras_transformer.cli.conftest import user_error


@pytest.fixture(scope="module")
def parsing_run(shared_parsing_run, tmp_path_factory):
    """A copy of the shared tiny parsing run that this file's tests write
    into (evaluations, exports)."""
    import shutil

    run_dir = tmp_path_factory.mktemp("parsing") / "run"
    shutil.copytree(shared_parsing_run, run_dir)
    return run_dir


def test_prepare_writes_both_vocabularies_and_counts_the_trees(parsing_run):
    source = pipelines.load_tokenizer(str(parsing_run / "tokenizer.model"))
    target = pipelines.load_tokenizer(str(parsing_run / "target_tokenizer.model"))
    assert source.vocab_size == 600
    trees, _ = pipelines.load_bundled_trees("train")
    # The recipe predicts the tags (`tree_tags`): they are symbols too.
    assert target.symbols == list(pipelines.target_symbols(trees, tags=True))
    with open(parsing_run / "data" / "filter_report.json") as f:
        report = json.load(f)
    assert report["total"] == 3707 and report["kept"] > 3600


def test_evaluate_scores_f1_and_parse_writes_trees_over_the_words(
    parsing_run, tmp_path, capsys
):
    assert cli.main(["evaluate", "--run-dir", str(parsing_run), "--limit", "4"]) == 0
    out = capsys.readouterr().out
    assert "F1 " in out and "gold tags on the leaves" in out
    with open(parsing_run / "eval" / "test.json") as f:
        scores = json.load(f)
    assert scores["task"] == "parsing" and scores["sentences"] == 4
    assert 0.0 <= scores["f1"] <= 100.0 and scores["repaired_outputs"] >= 0
    # The recipe predicts tags: EVALB's figures with them are reported too.
    assert 0.0 <= scores["f1_predicted_tags"] <= 100.0
    assert 0.0 <= scores["tagging_accuracy"] <= 100.0 and "predicted tags: F1" in out
    assert scores["evalb"]["all"]["sentences"] == 4
    sentences = ["The cat sat on the mat .", "", "Hello"]
    source = tmp_path / "in.txt"
    source.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    output = tmp_path / "out.txt"
    command = ["parse", "--run-dir", str(parsing_run), "--input", str(source)]
    assert cli.main(command + ["--output", str(output)]) == 0
    trees = output.read_text(encoding="utf-8").splitlines()
    assert len(trees) == 3 and trees[1] == "(TOP )"
    for sentence, line in zip(sentences, trees, strict=True):
        if sentence:  # the empty tree `(TOP )` is no bracket file's tree
            assert pipelines.parse_tree(line).words() == tuple(sentence.split())


def test_a_bfloat16_evaluation_parses_in_graph_mode(parsing_run, monkeypatch):
    # As translation's: XLA's CPU backend runs bfloat16 without AMX.
    from keras_transformer.parsing import parse_search  # noqa: F401 (the module, below)

    module = sys.modules["keras_transformer.parsing.parse_search"]
    modes = []

    def recording(*args, **kwargs):
        modes.append(kwargs["jit_compile"])
        return translate_texts(*args, **kwargs)

    translate_texts = module.translate_texts
    monkeypatch.setattr(module, "translate_texts", recording)
    argv = ["evaluate", "--run-dir", str(parsing_run), "--limit", "4"]
    recorded = []
    for extra in (["--compute-dtype", "bfloat16"], []):  # float32 last
        assert cli.main(argv + extra) == 0
        with open(parsing_run / "eval" / "test.json") as f:
            recorded.append(json.load(f)["compute_dtype"])
    assert (modes, recorded) == ([False, True], ["bfloat16", "float32"])


def test_the_export_parses_as_the_run_does(parsing_run, tmp_path, capsys):
    assert cli.main(["export", "--run-dir", str(parsing_run)]) == 0
    export = str(parsing_run / "export" / "1")
    long_sentence = " ".join(["word"] * 600)  # over the 512-position limit
    sentences = ["The cat sat on the mat .", "", "Hello", "b\xe4d (x) y", long_sentence]
    source = tmp_path / "in.txt"
    source.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    commands = {}
    for where in ("--run-dir", "--export", "--run-dir beam1", "--export beam1"):
        path = tmp_path / f"{where[2:].replace(' ', '_')}.txt"
        place = str(parsing_run) if where.startswith("--run-dir") else export
        command = ["parse", where.split()[0], place, "--input", str(source)]
        command += ["--output", str(path)]
        if where.startswith("--run-dir"):  # the export's dtype, not `auto`'s
            command += ["--compute-dtype", "float32"]
        if where.endswith("beam1"):
            # One beam is greedy search in both (`one_beam_as_greedy`).
            command += ["--beam-size", "1"]
        commands[where] = (command, path)
    assert cli.main(commands["--run-dir"][0]) == 0
    # The 600-word line is named, cut for the search, covered whole.
    err = capsys.readouterr().err
    assert "a line of 600 words" in err and "over the model's 512" in err
    assert "parse: 5 lines" in err and "1 lines cut" in err
    assert "parsed 5/5" in err
    assert cli.main(commands["--run-dir beam1"][0]) == 0
    recipe = RunDirectory(str(parsing_run)).read_recipe()
    parser = Parser(None, recipe.decoding, str(parsing_run))
    assert parser.decoding_with(beam_size=1).method == "greedy"
    # The export alone, in a fresh process (both commands in one): nothing
    # of the run loaded.
    program = "import json, sys; from keras_transformer.cli import main; "
    program += "sys.exit(max(main(argv) for argv in json.loads(sys.argv[1])))"
    argvs = [commands[where][0] for where in ("--export", "--export beam1")]
    done = subprocess.run(
        [sys.executable, "-c", program, json.dumps(argvs)], capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    outputs = {
        where: path.read_text(encoding="utf-8").splitlines()
        for where, (_, path) in commands.items()
    }
    assert outputs["--export"] == outputs["--run-dir"]
    assert outputs["--export beam1"] == outputs["--run-dir beam1"]
    assert outputs["--export"][1] == "(TOP )" and len(outputs["--export"]) == 5
    with open(parsing_run / "export" / "1" / "assets.extra" / "record.json") as f:
        record = json.load(f)
    # The recipe's search is bracket-constrained: the id signature, which has
    # no words to count, is left out.
    assert record["decoding"]["constrain_brackets"] is True
    beam_sizes = range(1, record["decoding"]["max_beam_size"] + 1)
    parse_at_one_beam = [f"parse_beam_{k}" for k in beam_sizes]
    assert record["signatures"] == sorted(
        ["parse", "serving_default", *parse_at_one_beam]
    )
    for sentence, tree in zip(sentences, outputs["--export"], strict=True):
        if sentence and "(" not in sentence:  # brackets in words do not read back
            assert pipelines.parse_tree(tree).words() == tuple(sentence.split())
    assert record["target_tokenizer"]["kind"] == "symbols"
    capsys.readouterr()  # the parse's progress and notices
    err = user_error(["translate", "--export", export], capsys)
    assert "no `translate` signature" in err
    # The library: `Parser` from the run and from the export, the same trees
    # as `parse`, one beam by a per-call setting.
    for parser in (Parser.from_run(str(parsing_run)), Parser.from_export(export)):
        trees = parser.parse(sentences)
        assert [str(tree) for tree in trees] == outputs["--run-dir"]
        assert trees[3].words() == ("b\xe4d", "(x)", "y")  # brackets in words
        beam1 = parser.parse(sentences, beam_size=1)
        assert [str(tree) for tree in beam1] == outputs["--run-dir beam1"]
        assert parser.repairs >= 0
    with pytest.raises(ValueError, match="Received: sentences=\\[\\]"):
        parser.parse([])
    with pytest.raises(ValueError, match="is a parsing run, not a translation run"):
        Translator.from_run(str(parsing_run))
    with pytest.raises(ValueError, match="no `translate` signature"):
        Translator.from_export(export)


def test_translation_commands_refuse_a_parsing_run(parsing_run, capsys):
    err = user_error(
        [
            "attention",
            "--run-dir",
            str(parsing_run),
            "--sentence",
            "x",
            "--png",
            "x.png",
        ],
        capsys,
    )
    assert "parsing run" in err


def test_wsj_parsing_needs_a_treebank(tmp_path, capsys):
    err = user_error(
        ["prepare", "--recipe", "wsj_parsing", "--run-dir", str(tmp_path / "r")],
        capsys,
    )
    assert "--treebank-dir" in err


def test_wsj_sections_and_extra_trees_make_the_splits(tmp_path):
    from keras_transformer.recipes import get_recipe
    from keras_transformer.runs.run_data import split_trees
    from keras_transformer.runs.user_error import UserError

    wsj = tmp_path / "parsed" / "mrg" / "wsj"
    for section in ("02", "21", "22", "23", "24"):
        (wsj / section).mkdir(parents=True)
        tree = f"( (S (NP-SBJ (NN w{section})) (VP (VBZ v))) )\n"
        (wsj / section / f"wsj_{section}01.mrg").write_text(tree)
    extra = tmp_path / "extra.mrg"
    extra.write_text("(ROOT (S (NN a)))\n(ROOT (S (NN b)))\n")
    recipe = get_recipe("wsj_parsing", treebank_dir=str(wsj))
    words = {
        split: [tree.words()[0] for tree in split_trees(recipe, split)[0]]
        for split in ("train", "dev", "test")
    }
    assert words == {"train": ["w02", "w21"], "dev": ["w22"], "test": ["w23"]}
    semi = get_recipe(
        "wsj_parsing_semi_supervised",
        treebank_dir=str(wsj),
        train_files=[[str(extra)]],
    )
    trees, report = split_trees(semi, "train")
    assert [tree.words()[0] for tree in trees] == ["w02", "w21", "a", "b"]
    assert len(split_trees(semi, "test")[0]) == 1  # extra trees train only
    with pytest.raises(UserError, match="--extra-trees"):
        split_trees(
            get_recipe("wsj_parsing_semi_supervised", treebank_dir=str(wsj)), "train"
        )


@pytest.mark.parametrize("beam_size, search", [(1, "xla"), (4, "graph")])
def test_streaming_parse_gives_the_trees_of_one_call(
    parsing_run, tmp_path, beam_size, search
):
    from keras_transformer.parsing.parse_search import parse_sentences
    from keras_transformer.runs.evaluation_files import best_hypothesis_decoding
    from keras_transformer.runs.loaded_run import load_run

    gold, _ = pipelines.load_bundled_trees("dev")
    sentences = [" ".join(tree.words()) for tree in gold[:16]]
    loaded = load_run(str(parsing_run), task="parsing")
    config = best_hypothesis_decoding(loaded.recipe, {"beam_size": beam_size})
    trees, _ = parse_sentences(loaded, sentences, config)
    source, output = tmp_path / "dev.txt", tmp_path / "trees.txt"
    source.write_text("".join(f"{s}\n" for s in sentences), encoding="utf-8")
    parser = Parser.from_run(str(parsing_run), search=search)
    # Small batches of many shapes: each compiled once by XLA, or all served
    # by one graph-mode trace.
    count = parser.parse_file(
        str(source), str(output), batch_tokens=600, beam_size=beam_size
    )
    assert count == 16 and parser.cut == 0 and parser.mode == search
    assert output.read_text(encoding="utf-8").splitlines() == [str(t) for t in trees]


def test_parse_refuses_a_missing_input_or_output_folder(parsing_run, tmp_path, capsys):
    run = ["parse", "--run-dir", str(parsing_run)]
    err = user_error(run + ["--input", str(tmp_path / "none.txt")], capsys)
    assert "No such input file" in err and "none.txt" in err
    source = tmp_path / "in.txt"
    source.write_text("a b\n", encoding="utf-8")
    missing = tmp_path / "missing" / "out.txt"
    err = user_error(run + ["--input", str(source), "--output", str(missing)], capsys)
    assert "No such folder for --output" in err


def test_f1_scores_the_brackets_with_the_gold_tags_on_the_leaves():
    from keras_transformer.evaluation import evalb
    from keras_transformer.parsing.bracket_scoring import bracket_scores, with_gold_tags

    gold = [
        pipelines.parse_tree("(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)))")
    ]
    # A predicted tag that makes '.' a word: EVALB deletes the gold's '.' only
    # and counts an error sentence; with the gold tags the brackets score.
    tagged = pipelines.parse_tree(
        "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (NN .)))"
    )
    assert evalb([str(gold[0])], [str(tagged)]).all.error_sentences == 1
    assert str(with_gold_tags(gold, [tagged])[0]) == str(gold[0])
    placeholders = "(TOP (S (NP (XX The) (XX cat)) (VP (XX sat)) (XX .)))"
    wrong = "(TOP (S (NP (XX The)) (VP (XX cat) (XX sat)) (XX .)))"
    # Gold S(0,3) NP(0,2) VP(2,3); wrong S(0,3) NP(0,1) VP(1,3): 1 of 3 each.
    for tree, f1 in ((tagged, 100.0), (placeholders, 100.0), (wrong, 33.33)):
        scores = bracket_scores(gold, [pipelines.parse_tree(str(tree))])
        assert (scores["f1"], scores["error_sentences"]) == (f1, 0)


def _parse(run_dir, source, output, cache):
    """`keras-transformer parse` as a process (as the console script runs
    it: `owns_process`, the garbage collector kept off the imports and the
    exit), reading stdin (an input of unknown length: XLA, per
    `search_mode`) in float32; its `(stdout, stderr)`."""
    program = "import sys; from keras_transformer.cli import main; "
    program += "sys.exit(main(sys.argv[1:], owns_process=True))"
    command = [sys.executable, "-c", program, "parse", "--run-dir", str(run_dir)]
    command += ["--output", str(output), "--compute-dtype", "float32"]
    env = {**os.environ, CACHE_ENV: str(cache)}
    env.pop("TF_XLA_FLAGS", None)
    with open(source, "rb") as stdin:
        done = subprocess.run(
            command, stdin=stdin, capture_output=True, text=True, env=env
        )
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


def _entries(cache):
    """{name: bytes} of every entry in the package cache's `xla/` folder."""
    return {
        name: (folder / name).read_bytes()
        for folder in (cache / "xla").iterdir()
        for name in os.listdir(folder)
        if name.startswith(CACHE_FILE_PREFIX)
    }


def test_a_second_process_loads_the_first_ones_compilations(
    shared_parsing_run, tmp_path
):
    sentences = ["The cat sat .", "", "A dog barked at the cat on the mat .", "Yes"]
    source = tmp_path / "in.txt"
    source.write_text("".join(f"{s}\n" for s in sentences), encoding="utf-8")
    cache = tmp_path / "cache"
    _parse(shared_parsing_run, source, tmp_path / "first.txt", cache)
    first = _entries(cache)
    (machine_folder,) = (cache / "xla").iterdir()  # this CPU's
    written = {name: (machine_folder / name).stat().st_mtime_ns for name in first}
    assert len(first) >= 2  # two batch shapes at least: 1 and 2 sentences
    # One entry cut short, as by a full disk: removed with one line, and
    # compiled again; the others are loaded (a compilation writes its entry,
    # and XLA's bytes differ from one compilation to the next).
    damaged = sorted(first)[0]
    (machine_folder / damaged).write_bytes(first[damaged][:100])
    stdout, stderr = _parse(shared_parsing_run, source, "-", cache)
    assert [line for line in stderr.splitlines() if "compile cache" in line] == [
        f"compile cache: removed 1 damaged entry from {machine_folder} "
        f"(e.g. {damaged}); they compile again"
    ]
    second = _entries(cache)
    assert second.keys() == first.keys() and is_whole_entry(second[damaged])
    for name in set(first) - {damaged}:  # loaded: the files never written again
        assert second[name] == first[name], name
        assert (machine_folder / name).stat().st_mtime_ns == written[name], name
    # The cache never changes a tree: the same as graph mode in this process.
    parser = Parser.from_run(str(shared_parsing_run), search="graph")
    expected = [str(tree) for tree in parser.parse(sentences)]
    assert (tmp_path / "first.txt").read_text(encoding="utf-8").splitlines() == expected
    assert stdout.splitlines() == expected
