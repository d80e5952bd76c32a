"""Whole-process translation speed of a trained run's weights in
CTranslate2, the peer of `keras-transformer translate --input`.

Converts a run's weights (its newest averaged `.weights.h5`, else its newest
checkpoint, or `--weights`) into a CTranslate2 model in a temporary
directory, once (`convert_seconds`, part of no translate time;
benchmarks/ctranslate2_conversion.py says how the model maps), then, for
each `--compute-types` entry, translates `--input` in a fresh child process
of its own and times that process from start to exit: interpreter start-up,
`import ctranslate2`, loading the model (quantizing the float32 weights on
loading, for `int8`), tokenizing, translating, detokenizing and writing, as
a shell's `time` of `keras-transformer translate --input` measures ours.
Prints one JSON line per compute type: {"benchmark", "compute_type",
"beam_size", "length_penalty", "sentences", "seconds",
"sentences_per_second", "load_seconds", "translate_seconds",
"convert_seconds", "bleu" and "bleu_signature" (sacreBLEU, with
`--references`; `13a` for German, as our `evaluate`), "ctranslate2"}.
`load_seconds` (imports and loading, from the child's first line) and
`translate_seconds` (reading the input to writing the output) are the
child's own split of `seconds`.

    python benchmarks/ctranslate2_peer.py --run-dir keras-transformer-demo \
        --input test.src --references test.ref --compute-types float32 int8
    time keras-transformer translate --run-dir keras-transformer-demo \
        --input test.src --output /dev/null

Needs only `pip install ".[peers]"` (ctranslate2) beside h5py, sentencepiece
and sacrebleu: neither script imports TensorFlow, Keras or this package.

Decoding as `translate` does it: sources are cut to the recipe's
`max_train_length` - 1 pieces and end with eos (`encode_sources`), empty
lines give an empty output untranslated, outputs are detokenized by
SentencePiece. `--beam-size` is the recipe's by default (1 is greedy).
CTranslate2 runs on the CPU with 2 intra-op threads and 1 translator; the
sources are sorted by length and translated 64 at a time
(`max_batch_size=64`, `batch_type="examples"`), each batch with
`max_decoding_length` its longest source (eos included) + the recipe's
`max_extra_length` (50), and each output is then cut to its own source
length + 50 pieces, our per-sentence limit (CTranslate2 takes one limit per
call; for greedy search the cut gives exactly a per-sentence limit's output).

Greedy search is the same function as ours, so float32 gives our outputs up
to floating-point rounding near ties. Beam search differs in two ways no
option maps exactly: our score is log P / ((5 + |y|) / 6)^alpha (GNMT),
CTranslate2's log P / |y|^length_penalty, and we stop a sentence once no
alive beam can beat the worst of K finished ones where CTranslate2 stops
once K are finished (`patience` 1). `--length-penalty` defaults to
`gnmt_length_penalty(alpha)`, the exponent whose penalty grows as GNMT's
does at a typical output length (0.48 for alpha 0.6).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from ctranslate2_conversion import (
    EOS_PIECE,
    SENTENCEPIECE_FILE,
    SETTINGS_FILE,
    convert_run,
    latest_weights,
)

# The output length at which `gnmt_length_penalty` matches GNMT's growth.
TYPICAL_OUTPUT_LENGTH = 20


def gnmt_length_penalty(alpha, length=TYPICAL_OUTPUT_LENGTH):
    """The exponent p of CTranslate2's |y|^p that grows like GNMT's
    ((5 + |y|) / 6)^alpha at `length`: p = alpha * L / (5 + L) (equal
    derivatives of their logarithms in log |y|), 0.48 for alpha 0.6. Both
    divide log P, so their ratio between two lengths near L is what ranks
    hypotheses."""
    return alpha * length / (5 + length)


def translate_file(
    model_dir,
    input_path,
    output_path,
    compute_type,
    beam_size,
    length_penalty,
    batch_size=64,
):
    """Translates `input_path` into `output_path` with the converted model;
    the child process's work. Returns `(sentences, loaded)`: the line
    count and the `time.perf_counter()` at which the translator was loaded."""
    import ctranslate2  # noqa: PLC0415
    import sentencepiece  # noqa: PLC0415

    translator = ctranslate2.Translator(
        model_dir,
        device="cpu",
        compute_type=compute_type,
        inter_threads=1,
        intra_threads=2,
    )
    processor = sentencepiece.SentencePieceProcessor(
        model_file=os.path.join(model_dir, SENTENCEPIECE_FILE)
    )
    with open(os.path.join(model_dir, SETTINGS_FILE), encoding="utf-8") as handle:
        settings = json.load(handle)
    loaded = time.perf_counter()
    with open(input_path, encoding="utf-8", errors="replace") as handle:
        lines = [line.rstrip("\r\n") for line in handle]
    # Pieces cut to the training length - 1, then eos (`encode_sources`).
    keep = settings["max_input_length"] - 1
    order = [i for i, line in enumerate(lines) if line.strip()]
    pieces = {
        i: processor.encode(lines[i], out_type=str)[:keep] + [EOS_PIECE] for i in order
    }
    order.sort(key=lambda i: len(pieces[i]))
    extra = settings["max_extra_length"]
    outputs = [""] * len(lines)
    for start in range(0, len(order), batch_size):
        batch = order[start : start + batch_size]
        sources = [pieces[i] for i in batch]
        results = translator.translate_batch(
            sources,
            beam_size=beam_size,
            length_penalty=length_penalty,
            max_batch_size=batch_size,
            batch_type="examples",
            max_input_length=0,  # cut above
            max_decoding_length=max(map(len, sources)) + extra,
        )
        for i, source, result in zip(batch, sources, results, strict=True):
            # our per-sentence limit: source length (eos included) + extra
            tokens = result.hypotheses[0][: len(source) + extra]
            outputs[i] = processor.decode(tokens)
    with open(output_path, "w", encoding="utf-8") as handle:
        handle.writelines(f"{line}\n" for line in outputs)
    return len(lines), loaded


def run_child(args):
    """`--child`: one whole-process translation, its figures on stdout."""
    start = time.perf_counter()
    sentences, loaded = translate_file(
        args.model_dir,
        args.input,
        args.output,
        args.compute_types[0],
        args.beam_size,
        args.length_penalty,
    )
    import ctranslate2  # noqa: PLC0415 (already imported)

    print(
        json.dumps(
            {
                "sentences": sentences,
                "load_seconds": loaded - start,
                "translate_seconds": time.perf_counter() - loaded,
                "ctranslate2": ctranslate2.__version__,
            }
        ),
        flush=True,
    )


def bleu(output_path, references_path, target_language):
    """sacreBLEU's corpus BLEU of the output file and its signature, with
    the tokenizer our `evaluate` picks for the target language (`13a` but
    for Chinese, Japanese and Korean; `bleu_tokenizer`)."""
    import sacrebleu  # noqa: PLC0415

    language = (target_language or "").split("-")[0].lower()
    tokenize = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}.get(language, "13a")

    def read(path):
        with open(path, encoding="utf-8") as handle:
            return [line.rstrip("\r\n") for line in handle]

    metric = sacrebleu.metrics.BLEU(tokenize=tokenize, trg_lang=language)
    score = metric.corpus_score(read(output_path), [read(references_path)])
    return round(score.score, 2), str(metric.get_signature())


def run_compute_type(args, model_dir, output_dir, compute_type, length_penalty):
    """Times one child process; returns its record (without conversion)."""
    output = os.path.join(output_dir, f"ctranslate2_{compute_type}.txt")
    command = [
        sys.executable,
        os.path.abspath(__file__),
        "--child",
        "--model-dir",
        model_dir,
        "--run-dir",
        args.run_dir,
        "--input",
        args.input,
        "--output",
        output,
        "--compute-types",
        compute_type,
        "--beam-size",
        str(args.beam_size),
        "--length-penalty",
        str(length_penalty),
    ]
    start = time.perf_counter()
    # The child's errors go to our stderr; its figures come on its stdout.
    child = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    figures = json.loads(child.stdout.strip().splitlines()[-1])
    return output, {
        "sentences": figures["sentences"],
        "seconds": round(seconds, 3),
        "sentences_per_second": round(figures["sentences"] / seconds, 2),
        "load_seconds": round(figures["load_seconds"], 3),
        "translate_seconds": round(figures["translate_seconds"], 3),
        "ctranslate2": figures["ctranslate2"],
    }


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--input", required=True, help="Source lines to translate.")
    parser.add_argument("--weights", help="Default: the run's newest weights.")
    parser.add_argument("--references", help="Reference lines, for BLEU.")
    parser.add_argument(
        "--beam-size", type=positive_int, help="Default: the recipe's (1: greedy)."
    )
    parser.add_argument(
        "--length-penalty",
        type=float,
        help="CTranslate2's exponent. Default: gnmt_length_penalty(recipe alpha).",
    )
    parser.add_argument(
        "--compute-types",
        nargs="+",
        default=["float32", "int8"],
        help="CTranslate2 compute types, one child process each.",
    )
    parser.add_argument(
        "--output-dir", help="Keep the translations here. Default: a temporary one."
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args)
        return

    weights = args.weights or latest_weights(args.run_dir)
    with tempfile.TemporaryDirectory() as temporary:
        model_dir = os.path.join(temporary, "model")
        start = time.perf_counter()
        recipe = convert_run(args.run_dir, weights, model_dir)
        convert_seconds = round(time.perf_counter() - start, 3)
        decoding = recipe["decoding"]
        if args.beam_size is None:
            args.beam_size = (
                1 if decoding["method"] == "greedy" else decoding["beam_size"]
            )
        length_penalty = args.length_penalty
        if length_penalty is None:
            length_penalty = round(gnmt_length_penalty(decoding["alpha"]), 4)
        output_dir = args.output_dir or temporary
        os.makedirs(output_dir, exist_ok=True)
        for compute_type in args.compute_types:
            output, figures = run_compute_type(
                args, model_dir, output_dir, compute_type, length_penalty
            )
            record = {
                "benchmark": "ctranslate2_peer",
                "compute_type": compute_type,
                "beam_size": args.beam_size,
                "length_penalty": length_penalty if args.beam_size > 1 else None,
                **figures,
                "convert_seconds": convert_seconds,
            }
            if args.references:
                record["bleu"], record["bleu_signature"] = bleu(
                    output, args.references, recipe.get("target_language")
                )
            record["ctranslate2"] = record.pop("ctranslate2")
            print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
