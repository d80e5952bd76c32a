"""The user's own corpus through the command line, end to end: prepare (by
train), train, average, evaluate, export and translate, in each of the two
file formats, gzipped, and in scripts other than Latin (Arabic, right to
left, into Chinese, unsegmented)."""

import gzip
import json
import random

import pipelines
from keras_transformer import cli
from tests.keras_transformer.cli.conftest import tiny_arguments

# A word-for-word toy language pair: Arabic words and their Chinese words.
LEXICON = {
    "بيت": "房子",
    "كبير": "大",
    "صغير": "小",
    "قطة": "猫",
    "كلب": "狗",
    "ماء": "水",
    "شمس": "太阳",
    "كتاب": "书",
    "جديد": "新",
    "قديم": "旧",
    "أحمر": "红",
    "أزرق": "蓝",
    "يأكل": "吃",
    "يشرب": "喝",
    "يقرأ": "读",
    "في": "在",
    "و": "和",
    "هذا": "这",
}


def arabic_chinese_pairs(count, seed):
    rng = random.Random(seed)
    words = sorted(LEXICON)
    pairs = []
    for _ in range(count):
        sentence = [rng.choice(words) for _ in range(rng.randint(2, 7))]
        pairs.append((" ".join(sentence), "".join(LEXICON[w] for w in sentence) + "。"))
    return pairs


def fixture_pairs():
    path = pipelines.bundled_corpus_path("fixture", "en-de", "all")
    with open(path, encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("\t")) for line in f]


def write_gz(path, lines):
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(f"{line}\n" for line in lines)
    return str(path)


def two_files(directory, name, pairs):
    return [
        write_gz(directory / f"{name}.src.gz", [s for s, _ in pairs]),
        write_gz(directory / f"{name}.tgt.gz", [t for _, t in pairs]),
    ]


def lifecycle(run_dir, data, languages, *extra, export=True):
    """train -> average -> evaluate (-> export) through `cli.main`; the scores."""
    train = ["train", "--recipe", "demo", "--run-dir", str(run_dir)]
    for option in ("train", "dev", "test"):
        train += [f"--{option}", *data[option]]
    train += languages + ["--train-steps", "10"] + tiny_arguments(*extra)
    assert cli.main(train) == 0
    assert cli.main(["average", "--run-dir", str(run_dir)]) == 0
    assert cli.main(["evaluate", "--run-dir", str(run_dir)]) == 0
    if export:
        assert cli.main(["export", "--run-dir", str(run_dir)]) == 0
    with open(run_dir / "eval" / "test.json", encoding="utf-8") as f:
        return json.load(f)


def test_two_gzipped_files_per_split(tmp_path):
    pairs = fixture_pairs()
    data = {
        "train": two_files(tmp_path, "train", pairs[:260]),
        "dev": two_files(tmp_path, "dev", pairs[260:280]),
        "test": two_files(tmp_path, "test", pairs[280:]),
    }
    run_dir = tmp_path / "run"
    # No languages given: neutral. (The export of a files run is tested below.)
    scores = lifecycle(run_dir, data, [], export=False)
    assert scores["sentences"] == 20 and scores["target_language"] is None
    assert "tok:13a" in scores["bleu_signature"] and "chrf" in scores
    with open(run_dir / "recipe.json", encoding="utf-8") as f:
        recipe = json.load(f)
    assert recipe["data_source"] == "files" and recipe["source_language"] is None
    assert recipe["test_files"] == [data["test"]]
    with open(run_dir / "data" / "filter_report.json", encoding="utf-8") as f:
        assert json.load(f)["total"] == 260
    dev = cli.main(["evaluate", "--run-dir", str(run_dir), "--split", "dev"])
    assert dev == 0 and (run_dir / "eval" / "dev.txt").read_text().count("\n") == 20


def test_a_gzipped_tsv_from_arabic_into_chinese(tmp_path):
    pairs = arabic_chinese_pairs(320, seed=0)
    data = {
        split: [write_gz(tmp_path / f"{split}.tsv.gz", [f"{s}\t{t}" for s, t in part])]
        for split, part in (
            ("train", pairs[:280]),
            ("dev", pairs[280:300]),
            ("test", pairs[300:]),
        )
    }
    run_dir = tmp_path / "run"
    languages = ["--source-language", "ar", "--target-language", "zh"]
    scores = lifecycle(run_dir, data, languages, "vocab_size=400")
    assert scores["sentences"] == 20 and scores["target_language"] == "zh"
    assert "tok:zh" in scores["bleu_signature"]
    assert "chrf_signature" in scores
    # The served model translates Arabic lines from a file into a file.
    sources = tmp_path / "in.ar"
    sources.write_text("\n".join(s for s, _ in pairs[300:305]) + "\n\n")
    output = tmp_path / "out.zh"
    export = str(run_dir / "export" / "1")
    command = ["translate", "--export", export, "--input", str(sources)]
    assert cli.main(command + ["--output", str(output)]) == 0
    lines = output.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 7 and lines[5] == "" and lines[6] == ""  # 6 lines + "\n"
    tokenizer = pipelines.load_tokenizer(str(run_dir / "tokenizer.model"))
    # The shared vocabulary holds both scripts.
    pieces = tokenizer.tokenize(["بيت كبير", "房子大"]).to_list()
    assert all(1 not in ids for ids in pieces)  # no unknown piece
