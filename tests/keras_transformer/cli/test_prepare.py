"""`prepare` on the user's own files: the record of the files, the sharded
cache and its resumption, and every kind of dirty line, skipped and counted
or refused naming the file and line (one line on stderr, exit status 2)."""

import gzip
import json
import os

import pytest

import pipelines
from keras_transformer import cli
from keras_transformer.recipes import get_recipe
from keras_transformer.runs import training_cache
from keras_transformer.runs.prepare import prepare
from keras_transformer.runs.run_directory import RunDirectory
from tests.keras_transformer.cli.conftest import TINY, tiny_arguments


def fixture_lines():
    path = pipelines.bundled_corpus_path("fixture", "en-de", "all")
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f]


def write_corpus(directory, pairs, gz=True):
    """Two line-aligned files; `pairs` of bytes or str."""
    suffix = ".gz" if gz else ""
    paths = [
        str(directory / f"corpus.en{suffix}"),
        str(directory / f"corpus.de{suffix}"),
    ]
    for side, path in enumerate(paths):
        with (gzip.open if gz else open)(path, "wb") as f:
            for pair in pairs:
                text = pair[side]
                f.write((text if isinstance(text, bytes) else text.encode()) + b"\n")
    return paths


def run_prepare(run_dir, train, *extra):
    arguments = ["prepare", "--recipe", "demo", "--run-dir", str(run_dir)]
    return cli.main(arguments + ["--train", *train, *extra] + tiny_arguments())


def one_error_line(capsys):
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def report(run_dir):
    with open(RunDirectory(str(run_dir)).filter_report_path) as f:
        return json.load(f)


def test_prepare_records_files_shards_the_cache_and_resumes(tmp_path, monkeypatch):
    train = write_corpus(tmp_path, fixture_lines())
    run = RunDirectory(str(tmp_path / "run"))
    calls = []
    write = pipelines.write_token_shard

    def interrupted(*args, **kwargs):
        calls.append(args[3])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return write(*args, **kwargs)

    monkeypatch.setattr(pipelines, "write_token_shard", interrupted)
    settings = {
        key: json.loads(value) if value[0].isdigit() or value == "null" else value
        for key, value in (pair.split("=", 1) for pair in TINY)
    }
    settings.update(
        data_source="files",
        dataset=None,
        train_split="train",
        train_files=[train],
        source_language=None,
        target_language=None,
    )
    recipe = get_recipe("demo", **settings)
    with pytest.raises(KeyboardInterrupt):  # in the second of four shards
        prepare(recipe, run.path, verbose=0, shard_pairs=80)
    first = os.path.join(run.cache_dir, "shard-00000.tfrecord")
    done = os.stat(first).st_mtime_ns
    assert not training_cache.cache_ready(run)
    assert not os.path.exists(run.filter_report_path)
    assert sorted(os.listdir(run.cache_dir)) == [
        "shard-00000.tfrecord",
        "shard-00000.tfrecord.json",
    ]
    prepare(recipe, run.path, verbose=0, shard_pairs=80)
    assert os.stat(first).st_mtime_ns == done  # kept, not rewritten
    assert [os.path.basename(p) for p in calls[2:]] == [
        f"shard-0000{i}.tfrecord" for i in (1, 2, 3)
    ]
    assert len(training_cache.cache_shards(run)) == 4
    resumed = report(run.path)
    # The same counts as one uninterrupted pass.
    monkeypatch.setattr(pipelines, "write_token_shard", write)
    again = tmp_path / "again"
    prepare(recipe, str(again), verbose=0, shard_pairs=300)
    assert len(training_cache.cache_shards(RunDirectory(str(again)))) == 1
    assert report(again) == resumed and resumed["total"] == 300
    with open(run.sources_path) as f:
        record = json.load(f)
    assert [[s["path"] for s in part] for part in record["train"]] == [train]
    assert record["train"][0][0]["lines"] == 300
    tokenizer = pipelines.load_tokenizer(run.tokenizer_path)
    assert tokenizer.vocab_size == 600
    modified = os.stat(run.tokenizer_path).st_mtime_ns
    prepare(recipe, run.path, verbose=0)
    assert os.stat(run.tokenizer_path).st_mtime_ns == modified


def test_a_changed_training_file_is_refused_and_a_touched_one_accepted(
    tmp_path, capsys
):
    lines = fixture_lines()
    train = write_corpus(tmp_path, lines, gz=False)
    assert run_prepare(tmp_path / "run", train) == 0
    os.utime(train[0], ns=(5, 5))
    assert run_prepare(tmp_path / "run", train) == 0
    with open(train[1], "r+b") as f:  # one byte changed, same size
        first = f.read(1)
        f.seek(0)
        f.write(b"X" if first != b"X" else b"Y")
    capsys.readouterr()
    assert run_prepare(tmp_path / "run", train) == 2
    err = one_error_line(capsys)
    assert f"{train[1]} changed since" in err and "new run directory" in err
    status = cli.main(
        [
            "train",
            "--recipe",
            "demo",
            "--run-dir",
            str(tmp_path / "run"),
            "--train",
            *train,
            "--train-steps",
            "1",
        ]
        + tiny_arguments()
    )
    assert status == 2 and f"{train[1]} changed since" in one_error_line(capsys)


def test_a_line_count_mismatch_fails_before_any_work(tmp_path, capsys):
    lines = fixture_lines()
    source, target = write_corpus(tmp_path, lines)
    with gzip.open(target, "wb") as f:
        f.writelines(f"{de}\n".encode() for _, de in lines[:-2])
    assert run_prepare(tmp_path / "run", [source, target]) == 2
    err = one_error_line(capsys)
    assert f"{source} has 300 lines, {target} has 298" in err
    assert not (tmp_path / "run" / "tokenizer.model").exists()
    assert not (tmp_path / "run" / "recipe.json").exists()


DIRTY = {
    "invalid_utf8": ((b"caf\xe9 au lait", b"Milchkaffee"), "Invalid UTF-8"),
    "empty_source": (("", "Leer"), "Empty source side"),
    "empty_target": (("Empty", "   "), "Empty target side"),
    "source_too_long": (
        (" ".join(["Open the file"] * 60), "Datei"),
        "Source longer than max_train_length",
    ),
    "length_ratio": (
        ("Yes", " ".join(["Ja, natürlich gerne"] * 6)),
        "Length ratio over max_length_ratio",
    ),
}


@pytest.mark.parametrize("reason", sorted(DIRTY))
def test_a_dirty_line_is_skipped_and_counted_or_refused_by_name(
    tmp_path, capsys, reason
):
    pair, words = DIRTY[reason]
    lines = fixture_lines()
    lines.insert(41, pair)  # line 42
    train = write_corpus(tmp_path, lines)
    ratio = ["--max-length-ratio", "4"]
    assert run_prepare(tmp_path / "skip", train, *ratio) == 0
    out = capsys.readouterr().out
    counts = report(tmp_path / "skip")
    assert counts[reason] >= 1 and counts["total"] == 301
    assert f"{reason}={counts[reason]}" in out
    assert run_prepare(tmp_path / "fail", train, *ratio, "--on-bad-line", "fail") == 2
    err = one_error_line(capsys)
    assert f"{words} in {train[0]} and {train[1]} at line 42" in err, err
    assert "--on-bad-line skip" in err


def test_train_continues_a_prepared_own_data_run_from_its_directory(tmp_path, capsys):
    # The prepared run's files and settings are in its recipe.json: `train`
    # needs only the run directory; other data is refused, naming it.
    train = write_corpus(tmp_path, fixture_lines())
    assert run_prepare(tmp_path / "run", train, "--set", "label_smoothing=0.2") == 0
    run = ["--run-dir", str(tmp_path / "run")]
    (tmp_path / "other").mkdir()
    other = write_corpus(tmp_path / "other", fixture_lines()[:50])
    capsys.readouterr()
    assert cli.main(["train", *run, "--train", *other]) == 2
    err = one_error_line(capsys)
    assert "train_files=" in err and "give a new --run-dir" in err
    assert cli.main(["train", *run, "--train-steps", "2"]) == 0
    stored = RunDirectory(str(tmp_path / "run")).read_recipe()
    assert stored.data_source == "files" and stored.label_smoothing == 0.2
    assert [list(part) for part in stored.train_files] == [train]
    assert stored.train_steps == 2 and os.listdir(tmp_path / "run" / "checkpoints")
