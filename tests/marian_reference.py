"""A Hugging Face Marian folder made in the test: the reference implementation.

No model can be downloaded here, so the tests of the Marian import build
their own: two SentencePiece unigram models trained on the bundled
LibreOffice corpus (English source, German target, as OPUS-MT's are trained
per side), a `vocab.json` over both (with Marian's layout: `</s>` 0, `<unk>`
1, `<pad>` last, and one language code), and a small `MarianMTModel` with
weights trained for a few hundred steps on the same corpus, saved by
`transformers` itself (`save_pretrained`): a random model repeats one piece
to the length limit, a briefly trained one gives input-dependent outputs
that end with eos, so a search that differs shows.

Needs torch and transformers (the test extra).
"""

import gzip
import json
import os

from pipelines.text.bundled import bundled_corpus_path

# A language code in the vocabulary, as multilingual OPUS-MT models have.
LANGUAGE_CODE = ">>fra<<"


def corpus_pairs(split, limit):
    """The first `limit` (English, German) pairs of the bundled corpus' split."""
    path = bundled_corpus_path("libreoffice_help", "en-de", split)
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


def build_marian_folder(
    folder, seed=0, vocab_size=200, train_steps=300, **config_overrides
):
    """Writes a Hugging Face Marian folder under `folder`; returns its path.

    `config_overrides` replace `MarianConfig` fields (e.g.
    `activation_function="gelu"`).
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
            **config_overrides,
        }
    )
    tokenizer = MarianTokenizer(
        os.path.join(folder, "source.spm"),
        os.path.join(folder, "target.spm"),
        os.path.join(folder, "vocab.json"),
    )
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
    """A few hundred Adam steps on the pairs: outputs then depend on the
    input and end with eos at plausible lengths, unlike a random model's
    (which repeats one piece to the limit or stops at once)."""
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
