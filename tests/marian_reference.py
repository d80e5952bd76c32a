"""A Hugging Face Marian folder and its reference outputs, made in the test.

No model can be downloaded here, so the tests of the Marian import build
their own: two SentencePiece unigram models trained on the bundled
LibreOffice corpus (English source, German target, as OPUS-MT's are trained
per side), a `vocab.json` over both (Marian's layout: `</s>` 0, `<unk>` 1,
`<pad>` last, one language code), and a small `MarianMTModel` trained for a
few hundred steps on the same corpus, saved by `transformers` itself
(`save_pretrained`). A random model repeats one piece to the length limit;
a briefly trained one gives input-dependent outputs that end with eos, so a
search that differs shows.

This module runs as its own process (`python -m tests.marian_reference DIR`,
`make_reference`), which imports torch, transformers and ctranslate2 but
never TensorFlow: a PyTorch build and TensorFlow in one process can crash
(BUILD_NOTES, "Imported models"). It writes the folder to `DIR/hf` and
`DIR/reference.json`: the reference tokenizer's ids and decodings, logits on
a padded batch, greedy and beam outputs of `generate`, and CTranslate2's
greedy outputs from its converter of the same folder.
"""

import argparse
import gzip
import json
import os
import pathlib
import random
import subprocess
import sys

# A language code in the vocabulary, as multilingual OPUS-MT models have.
LANGUAGE_CODE = ">>fra<<"
# HF's `max_length` counts the decoder's start token; ours counts outputs.
HF_MAX_LENGTH = 128
CORPUS = pathlib.Path(__file__).resolve().parents[1] / "pipelines" / "data"


def corpus_pairs(split, limit):
    """The first `limit` (English, German) pairs of the bundled corpus' split."""
    path = CORPUS / "libreoffice_help" / f"en-de.{split}.tsv.gz"
    pairs = []
    with gzip.open(path, "rt", encoding="utf-8") as file:
        for line in file:
            source, target = line.rstrip("\n").split("\t")
            pairs.append((source, target))
            if len(pairs) == limit:
                break
    return pairs


def sample_sentences(count=50):
    """`count` English test sentences, then lines that exercise the tokenizer:
    characters no model saw, a language code, an empty line."""
    sentences = [source for source, _ in corpus_pairs("test", count)]
    return sentences + [
        "Grüße aus Köln ☃ 漢字 — «ok»",
        f"{LANGUAGE_CODE} Open the file.",
        "",
    ]


def sample_targets(count=20):
    """`count` German test sentences, then characters no model saw, a
    language code and an empty line: training targets."""
    targets = [target for _, target in corpus_pairs("test", count)]
    return targets + ["Grüße aus Köln ☃ 漢字", f"{LANGUAGE_CODE} Öffnen.", ""]


def make_reference(directory, train_steps=300, timeout=600):
    """Runs this module in a process of its own; returns `(folder, reference)`.

    `directory/hf` is the Hugging Face folder, `reference` the dict of
    `DIR/reference.json` (see `reference_outputs`).
    """
    directory = os.fspath(directory)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.marian_reference",
            directory,
            "--train-steps",
            str(train_steps),
        ],
        check=True,
        timeout=timeout,
        cwd=pathlib.Path(__file__).resolve().parents[1],
    )
    with open(os.path.join(directory, "reference.json"), encoding="utf-8") as file:
        return os.path.join(directory, "hf"), json.load(file)


def shared_reference(tmp_path_factory):
    """`make_reference`'s `(folder, reference)`, made once per test run and
    shared by the pytest-xdist workers (`tests.shared_build`); read only."""
    from tests.shared_build import build_once

    directory = build_once(tmp_path_factory, "marian_reference", make_reference)
    with open(directory / "reference.json", encoding="utf-8") as file:
        return str(directory / "hf"), json.load(file)


def build_marian_folder(folder, seed=0, vocab_size=200, train_steps=300, **overrides):
    """Writes a Hugging Face Marian folder under `folder`; returns its path.

    `overrides` replace `MarianConfig` fields.
    """
    import sentencepiece
    import torch
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    os.makedirs(folder, exist_ok=True)
    pairs = corpus_pairs("train", 3000)
    for side, name in ((0, "source"), (1, "target")):
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter([pair[side] for pair in pairs]),
            model_prefix=os.path.join(folder, name),
            vocab_size=vocab_size,
            model_type="unigram",
            character_coverage=0.9995,
            num_threads=1,
            minloglevel=2,
        )
        os.replace(
            os.path.join(folder, f"{name}.model"), os.path.join(folder, f"{name}.spm")
        )
        os.remove(os.path.join(folder, f"{name}.vocab"))
    pieces = []
    for name in ("source", "target"):
        processor = sentencepiece.SentencePieceProcessor(
            model_file=os.path.join(folder, f"{name}.spm")
        )
        for i in range(processor.get_piece_size()):
            piece = processor.id_to_piece(i)
            if piece not in ("<unk>", "<s>", "</s>") and piece not in pieces:
                pieces.append(piece)
    vocab = {"</s>": 0, "<unk>": 1, LANGUAGE_CODE: 2}
    for piece in pieces:
        vocab[piece] = len(vocab)
    vocab["<pad>"] = len(vocab)
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as file:
        json.dump(vocab, file, ensure_ascii=False)
    pad = vocab["<pad>"]
    config = MarianConfig(
        **{
            "vocab_size": len(vocab),
            "decoder_vocab_size": len(vocab),
            "d_model": 32,
            "encoder_layers": 2,
            "decoder_layers": 2,
            "encoder_attention_heads": 4,
            "decoder_attention_heads": 4,
            "encoder_ffn_dim": 64,
            "decoder_ffn_dim": 64,
            "max_position_embeddings": 512,
            "pad_token_id": pad,
            "eos_token_id": 0,
            "decoder_start_token_id": pad,
            "forced_eos_token_id": 0,
            "scale_embedding": True,
            "activation_function": "swish",
            "share_encoder_decoder_embeddings": True,
            **overrides,
        }
    )
    tokenizer = MarianTokenizer(
        os.path.join(folder, "source.spm"),
        os.path.join(folder, "target.spm"),
        os.path.join(folder, "vocab.json"),
    )
    # One thread: the reference runs beside a pytest-xdist worker on two
    # cores, where two threads train at half the speed of one, and the
    # trained weights do not depend on the machine's core count.
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    model = MarianMTModel(config)
    _train_briefly(model, tokenizer, pairs, train_steps)
    model.eval()
    with torch.no_grad():
        # A buffer training leaves at zero.
        model.final_logits_bias.normal_(0.0, 0.1)
        # Marian's decoder starts from a zero embedding: OPUS-MT folders
        # hold zeros in the pad row (CTranslate2's converter relies on it).
        model.get_input_embeddings().weight[pad].zero_()
    model.generation_config.num_beams = 4
    model.generation_config.max_length = 64
    model.generation_config.bad_words_ids = [[pad]]
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _train_briefly(model, tokenizer, pairs, steps, batch_size=32):
    """A few hundred Adam steps on the pairs (see the module docstring)."""
    import torch

    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    generator = torch.Generator().manual_seed(0)
    model.train()
    for _ in range(steps):
        rows = torch.randint(len(pairs), (batch_size,), generator=generator)
        batch = tokenizer(
            [pairs[i][0] for i in rows],
            text_target=[pairs[i][1] for i in rows],
            max_length=48,
            truncation=True,
            padding=True,
            return_tensors="pt",
        )
        batch["labels"][batch["labels"] == model.config.pad_token_id] = -100
        loss = model(**batch).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def reference_outputs(folder):
    """What `transformers` (and CTranslate2) make of `folder`, as JSON-ready
    lists of Marian ids:

    - `"input_ids"`: the tokenizer's ids of each `sample_sentences()` line
      (eos included);
    - `"decode_rows"`, `"decoded"`: 200 random id rows and their decoding
      (`skip_special_tokens=True`);
    - `"logits_inputs"`, `"logits"`: a padded batch of 8 lines with 9
      decoder inputs, and the model's logits on it;
    - `"greedy"`: `generate(num_beams=1)` outputs, without the start token,
      eos and pad; `"beam"`: the same for `generate(num_beams=4,
      length_penalty=1.0, early_stopping="never", renormalize_logits=True)`,
      and `"beam_default"` with Hugging Face's default `early_stopping` and
      no renormalization; `"beam_text"`, `"beam_default_text"`: the beam
      outputs decoded;
      `"outputs_at_limit"`: how many of these reached `HF_MAX_LENGTH`;
    - `"target_ids"`: the tokenizer's ids of each `sample_targets()` line
      as a training target (`text_target=`: split by `target.spm`, eos
      included);
    - `"loss"`: the model's training loss (mean cross-entropy over the
      target tokens, no label smoothing) on `corpus_pairs("train", 8)`
      as one padded batch;
    - `"ctranslate2_greedy"`: CTranslate2's greedy outputs from its
      converter of the folder (absent without ctranslate2).
    """
    import torch
    from transformers import MarianMTModel, MarianTokenizer

    tokenizer = MarianTokenizer.from_pretrained(folder)
    model = MarianMTModel.from_pretrained(folder).eval()
    pad, eos = model.config.pad_token_id, model.config.eos_token_id
    sentences = sample_sentences()
    generator = random.Random(0)
    rows = [
        [generator.randrange(len(tokenizer)) for _ in range(generator.randrange(15))]
        for _ in range(200)
    ]
    batch = tokenizer(sentences[:8], return_tensors="pt", padding=True)
    targets = torch.randint(4, 200, (8, 9), generator=torch.Generator().manual_seed(0))
    targets[:, 0] = model.config.decoder_start_token_id
    with torch.no_grad():
        logits = model(**batch, decoder_input_ids=targets).logits
    pairs = corpus_pairs("train", 8)
    training_batch = tokenizer(
        [source for source, _ in pairs],
        text_target=[target for _, target in pairs],
        return_tensors="pt",
        padding=True,
    )
    training_batch["labels"][training_batch["labels"] == pad] = -100
    with torch.no_grad():
        loss = model(**training_batch).loss.item()

    at_limit = [0]

    def generate(**options):
        batch = tokenizer(sentences, return_tensors="pt", padding=True)
        with torch.no_grad():
            output = model.generate(
                **batch, max_length=HF_MAX_LENGTH, bad_words_ids=[[pad]], **options
            )
        outputs = []
        for row in output.tolist():
            # At the limit Hugging Face forces eos, we stop without it.
            at_limit[0] += len(row) >= HF_MAX_LENGTH
            outputs.append([i for i in row[1:] if i not in (pad, eos)])
        return outputs

    beam = generate(
        num_beams=4,
        length_penalty=1.0,
        early_stopping="never",
        renormalize_logits=True,
    )
    beam_default = generate(num_beams=4, length_penalty=1.0)
    reference = {
        "input_ids": [tokenizer(s)["input_ids"] for s in sentences],
        "unk_id": tokenizer.unk_token_id,
        "decode_rows": rows,
        "decoded": [tokenizer.decode(r, skip_special_tokens=True) for r in rows],
        "logits_inputs": {
            "input_ids": batch["input_ids"].tolist(),
            "attention_mask": batch["attention_mask"].tolist(),
            "decoder_input_ids": targets.tolist(),
        },
        "logits": logits.tolist(),
        "greedy": generate(num_beams=1, do_sample=False),
        "beam": beam,
        "beam_default": beam_default,
        "beam_text": tokenizer.batch_decode(beam, skip_special_tokens=True),
        "beam_default_text": tokenizer.batch_decode(
            beam_default, skip_special_tokens=True
        ),
        "outputs_at_limit": at_limit[0],
        "target_ids": [tokenizer(text_target=t)["input_ids"] for t in sample_targets()],
        "loss": loss,
    }
    try:
        import ctranslate2
        from ctranslate2.converters import TransformersConverter
    except ImportError:
        return reference
    output = os.path.join(os.path.dirname(folder), "ct2")
    TransformersConverter(folder).convert(output, force=True)
    translator = ctranslate2.Translator(output, device="cpu", intra_threads=1)
    tokens = [tokenizer.convert_ids_to_tokens(ids) for ids in reference["input_ids"]]
    results = translator.translate_batch(
        tokens, beam_size=1, max_decoding_length=HF_MAX_LENGTH - 1
    )
    reference["ctranslate2_greedy"] = [
        tokenizer.convert_tokens_to_ids(r.hypotheses[0]) for r in results
    ]
    return reference


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory")
    parser.add_argument("--train-steps", type=int, default=300)
    args = parser.parse_args(argv)
    folder = build_marian_folder(
        os.path.join(args.directory, "hf"), train_steps=args.train_steps
    )
    reference = reference_outputs(folder)
    assert "tensorflow" not in sys.modules, "the reference imported TensorFlow"
    with open(os.path.join(args.directory, "reference.json"), "w") as file:
        json.dump(reference, file)


if __name__ == "__main__":
    main()
