"""Decoding speed of an imported Marian model: our export beside CTranslate2.

Builds (or reads, `--folder`) a Hugging Face Marian folder of
`transformer-base` size (6 + 6 layers, d_model 512, 8 heads, FFN 2048,
swish, a 58,101-piece vocabulary: OPUS-MT en-de's shape) with random
weights, imports it (`import_marian`), exports it in `--compute-dtype`
(`export`), and translates the same `--sentences` English lines of the
bundled corpus' test split with beam `--beam-size` in three ways, one after
the other in this process, nothing else running:

- ours: `Translator.from_export` (the SavedModel TF Serving runs);
- CTranslate2 `float32` and `int8`, from `ct2-transformers-converter`'s
  conversion of the same folder (`TransformersConverter`), 2 threads, the
  sources sorted by length and translated 64 at a time.

The folder is written and CTranslate2 runs in a child process of its own
(`--peer`), which imports torch, transformers and ctranslate2 but never
TensorFlow (a PyTorch build beside TensorFlow in one process can crash).

Random weights give outputs that run to the length limit, so both searches
get the same limit: each batch's longest source + 50 (our per-sentence limit
is the source's own length + 50, §6.1; CTranslate2 takes one per call). Each
row reports the output words (plus one eos each, `output_words`) beside
the time, so that the rates compare per output word as well as per
sentence. Prints one JSON line per engine:
{"benchmark", "engine", "compute", "beam_size", "sentences", "output_words",
"seconds", "sentences_per_second", "words_per_second", "load_seconds",
"cpu"}; `seconds` is the translation of all sentences, the first call
included, `load_seconds` loading the model.

    python benchmarks/marian_speed.py --workdir /tmp/marian-base \\
        --sentences 500 --beam-size 4 --compute-dtype bfloat16

Needs torch and transformers (to write the folder; the test extra) and
ctranslate2.
"""

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from keras_transformer.precisions import cpu_fields  # noqa: E402

# OPUS-MT en-de's shape (config.json of Helsinki-NLP/opus-mt-en-de).
BASE = {
    "vocab_size": 58101,
    "d_model": 512,
    "encoder_layers": 6,
    "decoder_layers": 6,
    "encoder_attention_heads": 8,
    "decoder_attention_heads": 8,
    "encoder_ffn_dim": 2048,
    "decoder_ffn_dim": 2048,
    "max_position_embeddings": 512,
    "activation_function": "swish",
    "scale_embedding": True,
}
EXTRA_LENGTH = 50


def make_base_folder(folder, seed=0):
    """A random OPUS-MT-sized Marian folder, its tokenizer from the bundled
    corpus (`tests/marian_reference.py`) padded with unused pieces."""
    import torch
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    from tests.marian_reference import build_marian_folder

    build_marian_folder(folder, seed=seed, train_steps=0)
    path = os.path.join(folder, "vocab.json")
    with open(path, encoding="utf-8") as handle:
        vocab = json.load(handle)
    del vocab["<pad>"]
    for i in range(len(vocab), BASE["vocab_size"] - 1):
        vocab[f"\u2581unused{i}"] = i
    vocab["<pad>"] = BASE["vocab_size"] - 1
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(vocab, handle, ensure_ascii=False)
    pad = BASE["vocab_size"] - 1
    # The small folder's tokenizer config names its own pad id: write anew.
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        if os.path.exists(os.path.join(folder, name)):
            os.remove(os.path.join(folder, name))
    MarianTokenizer(
        *(os.path.join(folder, n) for n in ("source.spm", "target.spm", "vocab.json"))
    ).save_pretrained(folder)
    config = MarianConfig(
        **BASE,
        decoder_vocab_size=BASE["vocab_size"],
        pad_token_id=pad,
        eos_token_id=0,
        decoder_start_token_id=pad,
    )
    torch.manual_seed(seed)
    model = MarianMTModel(config).eval()
    with torch.no_grad():
        model.get_input_embeddings().weight[pad].zero_()
    model.generation_config.num_beams = 4
    model.save_pretrained(folder)


def ours(run_dir, sentences, beam_size, compute_dtype):
    from keras_transformer.translation import Translator
    from keras_transformer.workflows.export_run import export

    path = export(run_dir, overwrite=True, version=1, compute_dtype=compute_dtype)
    start = time.perf_counter()
    translator = Translator.from_export(path)
    loaded = time.perf_counter()
    outputs = translator.translate(
        sentences, beam_size=beam_size, max_extra_length=EXTRA_LENGTH
    )
    seconds = time.perf_counter() - loaded
    return seconds, loaded - start, sum(output_words(text) for text in outputs)


def output_words(text):
    """What a row counts per output: its words plus one (eos). A random
    model's outputs are mostly the padded vocabulary's one-piece words
    (`▁unusedN`), so this is close to the pieces generated."""
    return len(text.split()) + 1


def ctranslate2_rows(folder, sentences, beam_size, compute_types):
    """`(compute type, seconds, load seconds, words)` per compute type; in
    the `--peer` child."""
    import ctranslate2
    from ctranslate2.converters import TransformersConverter
    from transformers import MarianTokenizer

    output = os.path.join(os.path.dirname(folder), "ct2")
    if not os.path.isdir(output):
        TransformersConverter(folder).convert(output)
    tokenizer = MarianTokenizer.from_pretrained(folder)
    sources = [
        tokenizer.convert_ids_to_tokens(tokenizer(s)["input_ids"]) for s in sentences
    ]
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
    for compute_type in compute_types:
        start = time.perf_counter()
        translator = ctranslate2.Translator(
            output, device="cpu", compute_type=compute_type, intra_threads=2
        )
        loaded = time.perf_counter()
        pieces = 0
        for first in range(0, len(order), 64):
            batch = [sources[i] for i in order[first : first + 64]]
            results = translator.translate_batch(
                batch,
                beam_size=beam_size,
                length_penalty=1.0,
                max_decoding_length=max(map(len, batch)) + EXTRA_LENGTH,
            )
            pieces += sum(
                output_words(tokenizer.convert_tokens_to_string(r.hypotheses[0]))
                for r in results
            )
        yield compute_type, time.perf_counter() - loaded, loaded - start, pieces


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--folder", help="A Hugging Face Marian folder to use.")
    parser.add_argument("--sentences", type=int, default=500)
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--compute-dtype", default="bfloat16")
    parser.add_argument("--ct2-compute-types", nargs="+", default=["float32", "int8"])
    parser.add_argument("--peer", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    from tests.marian_reference import corpus_pairs

    folder = args.folder or os.path.join(args.workdir, "hf")
    sentences = [source for source, _ in corpus_pairs("test", args.sentences)]
    common = {
        "benchmark": "marian_speed",
        "beam_size": args.beam_size,
        "sentences": len(sentences),
        "cpu": cpu_fields().get("model name"),
    }

    def emit(engine, compute, seconds, load_seconds, words):
        print(
            json.dumps(
                {
                    **common,
                    "engine": engine,
                    "compute": compute,
                    "output_words": words,
                    "seconds": round(seconds, 2),
                    "sentences_per_second": round(len(sentences) / seconds, 2),
                    "words_per_second": round(words / seconds, 1),
                    "load_seconds": round(load_seconds, 2),
                }
            ),
            flush=True,
        )

    if args.peer:
        if not os.path.isdir(folder):
            make_base_folder(folder)
        for compute, seconds, load, words in ctranslate2_rows(
            folder, sentences, args.beam_size, args.ct2_compute_types
        ):
            emit("ctranslate2", compute, seconds, load, words)
        return
    subprocess.run([sys.executable, __file__, "--peer", *sys.argv[1:]], check=True)
    from keras_transformer.runs.marian_import import import_marian

    run_dir = os.path.join(args.workdir, "run")
    if not os.path.isdir(run_dir):
        import_marian(folder, run_dir)
    seconds, load, words = ours(run_dir, sentences, args.beam_size, args.compute_dtype)
    emit("keras-transformer export", args.compute_dtype, seconds, load, words)


if __name__ == "__main__":
    main()
