"""`keras-transformer prepare` at scale: wall time, pairs/s and peak memory.

Writes a generated parallel corpus of N pairs (two line-aligned plain files;
Zipf-distributed words from a 20,000-word made-up vocabulary, 5-40 words a
sentence, so that lines are of WMT length), then runs the `prepare` command
line on it in a child process, as a user would, and reads the child's peak
resident memory (`getrusage(RUSAGE_CHILDREN).ru_maxrss`). One JSON line per
size:

    python benchmarks/prepare_scale.py --pairs 1000000 5000000

The peer, measured side by side in the same run on the same files with the
same trained model: the `sentencepiece` package's own encoder
(`SentencePieceProcessor.encode`, C++, all cores), reading the two files in
100,000-line blocks and encoding both sides, nothing else (no cleaning, no
filter, no cache). `vs_sentencepiece` is prepare's pairs/s over the peer's.

The recipe is `demo` with the user's files, an 8,000-token vocabulary
trained on a bounded sample (`tokenizer_sample_pairs`, default 100,000), and
the default length filter. Memory must not grow with the corpus: reading,
cleaning and tokenizing stream, and the cache is written one shard at a
time (`keras_transformer.runs.training_cache`). The corpus files are written
to `--work-dir` (several GB for 5M pairs) and removed afterwards unless
`--keep`.
"""

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np


def write_corpus(directory, pairs, seed=0, words=20_000):
    """Two files of `pairs` lines; the target is a noisy word-for-word copy
    of the source in another made-up spelling."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(2, 9, size=words)
    vocabulary = ["".join(rng.choice(letters, size=n)) for n in lengths]
    foreign = [word[::-1] + "en" for word in vocabulary]
    ranks = np.arange(1, words + 1)
    zipf = (1.0 / ranks) / np.sum(1.0 / ranks)
    paths = [
        os.path.join(directory, "corpus.src"),
        os.path.join(directory, "corpus.tgt"),
    ]
    block = 100_000
    with open(paths[0], "w") as source, open(paths[1], "w") as target:
        for start in range(0, pairs, block):
            count = min(block, pairs - start)
            sentence_lengths = rng.integers(5, 41, size=count)
            ids = rng.choice(words, size=int(sentence_lengths.sum()), p=zipf)
            offset = 0
            src_lines, tgt_lines = [], []
            for length in sentence_lengths:
                sentence = ids[offset : offset + length]
                offset += length
                src_lines.append(" ".join(vocabulary[i] for i in sentence))
                tgt_lines.append(" ".join(foreign[i] for i in sentence[::-1]))
            source.write("\n".join(src_lines) + "\n")
            target.write("\n".join(tgt_lines) + "\n")
    return paths


def run_prepare(paths, run_dir, vocab_size, sample_pairs):
    # The console script, in its own process (its peak RSS is measured), as a
    # user runs it.
    command = [
        os.path.join(os.path.dirname(sys.executable), "keras-transformer"),
        "prepare",
        "--recipe",
        "demo",
        "--run-dir",
        run_dir,
        "--train",
        *paths,
        "--set",
        f"vocab_size={vocab_size}",
        "--set",
        f"tokenizer_sample_pairs={sample_pairs}",
    ]
    start = time.monotonic()
    log = open(os.path.join(os.path.dirname(run_dir), "prepare.log"), "w+")
    child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    _, status, usage = os.wait4(child.pid, 0)  # this child's own peak RSS
    seconds = time.monotonic() - start
    if status != 0:
        log.seek(0)
        raise SystemExit(f"prepare failed:\n{log.read()[-3000:]}")
    log.close()
    return seconds, usage.ru_maxrss


def sentencepiece_peer(paths, tokenizer_path, block=100_000):
    """Seconds for `sentencepiece` alone to encode both files."""
    import sentencepiece

    from pipelines import load_tokenizer

    model = load_tokenizer(tokenizer_path).model_proto
    processor = sentencepiece.SentencePieceProcessor(model_proto=model)
    start = time.monotonic()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            while lines := list(itertools.islice(f, block)):
                processor.encode(
                    [line.rstrip("\n") for line in lines], num_threads=os.cpu_count()
                )
    return time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--work-dir", default="/tmp/prepare_scale")
    parser.add_argument("--vocab-size", type=int, default=8_000)
    parser.add_argument("--sample-pairs", type=int, default=100_000)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    for pairs in args.pairs:
        directory = os.path.join(args.work_dir, f"{pairs}")
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory)
        start = time.monotonic()
        paths = write_corpus(directory, pairs)
        generate_seconds = time.monotonic() - start
        run_dir = os.path.join(directory, "run")
        seconds, peak_kib = run_prepare(
            paths, run_dir, args.vocab_size, args.sample_pairs
        )
        peer_seconds = sentencepiece_peer(
            paths, os.path.join(run_dir, "tokenizer.model")
        )
        with open(os.path.join(run_dir, "data", "filter_report.json")) as f:
            report = json.load(f)
        cache = os.path.join(run_dir, "data", "train")
        print(
            json.dumps(
                {
                    "benchmark": "prepare_scale",
                    "pairs": pairs,
                    "corpus_mb": round(sum(map(os.path.getsize, paths)) / 2**20, 1),
                    "prepare_seconds": round(seconds, 1),
                    "pairs_per_second": round(pairs / seconds),
                    "sentencepiece_seconds": round(peer_seconds, 1),
                    "sentencepiece_pairs_per_second": round(pairs / peer_seconds),
                    "vs_sentencepiece": round(peer_seconds / seconds, 3),
                    "peak_rss_mb": round(peak_kib / 1024),
                    "kept": report["kept"],
                    "shards": len(
                        [n for n in os.listdir(cache) if n.endswith(".tfrecord")]
                    ),
                    "cache_mb": round(
                        sum(
                            os.path.getsize(os.path.join(cache, n))
                            for n in os.listdir(cache)
                        )
                        / 2**20,
                        1,
                    ),
                    "generate_seconds": round(generate_seconds, 1),
                    "vocab_size": args.vocab_size,
                    "tokenizer_sample_pairs": args.sample_pairs,
                    "cpus": os.cpu_count(),
                }
            ),
            flush=True,
        )
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
