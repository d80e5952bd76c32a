"""The peer of fine-tuning an imported Marian model: Hugging Face
`transformers` fine-tuning the same folder on the same data at the same budget.

    python benchmarks/marian_fine_tune_peer.py --folder HF_FOLDER \
        --train train.en train.de --dev dev.en dev.de --test test.en test.de \
        --peak 2e-3 [--updates 600] [--tokens 2048] [--output PREFIX]

What `keras-transformer train --run-dir RUN --train ...` runs on an imported
run, written as a plain PyTorch loop over `MarianMTModel`: Adam (0.9, 0.98,
1e-9), 100 warmup updates then the inverse square root, scaled to peak at
`--peak` (`learning_rate_scale` is ours), label smoothing 0.1 over the
target tokens, pairs cut to 128 pieces, batches of at most `--tokens`
padded pieces (`max(source, target)` times the sentences, sorted by length
within chunks of 3,200 shuffled pairs), the folder's dropout. Then
`generate` with the folder's generation config (beam 4 and its
`max_length` for a folder written by `transformers`) on 32 sources at a
time, sorted by length, and sacreBLEU's BLEU and chrF on each evaluation
split. Differences from ours: no checkpoint averaging, and Hugging Face
keeps the decoder-start (pad) row's input gradient off (BUILD_NOTES.md,
"Imported models").

Never imports TensorFlow (a PyTorch build beside TensorFlow in one process
can crash). Prints one JSON line: `{"benchmark", "peak", "updates",
"train_seconds", "dev": [BLEU, chrF], "test": [BLEU, chrF], "cpu"}`;
translations go to `PREFIX.dev.txt` and `PREFIX.test.txt` with
`--output`.
"""

import argparse
import json
import math
import random
import time

CHUNK = 3200
MAX_PIECES = 128


def _lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().rstrip("\n").split("\n")


def _batches(pairs, tokens, rng):
    """Endless batches of pair indices, at most `tokens` padded pieces each."""
    while True:
        order = list(range(len(pairs)))
        rng.shuffle(order)
        for start in range(0, len(order), CHUNK):
            chunk = sorted(
                order[start : start + CHUNK], key=lambda i: max(map(len, pairs[i]))
            )
            batches, batch, width = [], [], 0
            for i in chunk:
                size = max(map(len, pairs[i]))
                if batch and (len(batch) + 1) * max(width, size) > tokens:
                    batches.append(batch)
                    batch, width = [], 0
                batch.append(i)
                width = max(width, size)
            batches.append(batch)
            rng.shuffle(batches)
            yield from batches


def _tensors(torch, pairs, batch, pad):
    sources = [pairs[i][0] for i in batch]
    targets = [pairs[i][1] for i in batch]
    width = max(map(len, sources))
    length = max(map(len, targets))
    ids = torch.tensor([s + [pad] * (width - len(s)) for s in sources])
    labels = torch.tensor([t + [-100] * (length - len(t)) for t in targets])
    return ids, (ids != pad).long(), labels


def _translate(torch, model, tokenizer, sources):
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
    outputs = [""] * len(sources)
    with torch.no_grad():
        for start in range(0, len(order), 32):
            batch = order[start : start + 32]
            inputs = tokenizer(
                [sources[i] for i in batch],
                return_tensors="pt",
                padding=True,
                truncation=True,
                max_length=MAX_PIECES,
            )
            generated = model.generate(**inputs)
            texts = tokenizer.batch_decode(generated, skip_special_tokens=True)
            for i, text in zip(batch, texts, strict=True):
                outputs[i] = text
    return outputs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", required=True, help="A Hugging Face Marian folder.")
    parser.add_argument("--train", nargs=2, required=True, metavar=("SRC", "TGT"))
    parser.add_argument("--dev", nargs=2, metavar=("SRC", "TGT"))
    parser.add_argument("--test", nargs=2, metavar=("SRC", "TGT"))
    parser.add_argument("--peak", type=float, required=True)
    parser.add_argument("--updates", type=int, default=600)
    parser.add_argument("--tokens", type=int, default=2048)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", help="Prefix of the translation files.")
    args = parser.parse_args()

    import sacrebleu  # noqa: PLC0415 (a peer's dependencies, never TensorFlow)
    import torch  # noqa: PLC0415
    from transformers import MarianMTModel, MarianTokenizer  # noqa: PLC0415

    from keras_transformer.precisions import cpu_fields  # noqa: PLC0415

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    tokenizer = MarianTokenizer.from_pretrained(args.folder)
    model = MarianMTModel.from_pretrained(args.folder)
    encoded = tokenizer(
        _lines(args.train[0]),
        text_target=_lines(args.train[1]),
        truncation=True,
        max_length=MAX_PIECES,
    )
    pairs = list(zip(encoded["input_ids"], encoded["labels"], strict=True))
    optimizer = torch.optim.Adam(
        model.parameters(), lr=args.peak, betas=(0.9, 0.98), eps=1e-9
    )
    # The paper's schedule (warmup 100), scaled to peak at `--peak`
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / 100, math.sqrt(100 / (step + 1)))
    )
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=-100)
    batches = _batches(pairs, args.tokens, rng)
    model.train()
    start = time.perf_counter()
    for _ in range(args.updates):
        ids, mask, labels = _tensors(
            torch, pairs, next(batches), model.config.pad_token_id
        )
        logits = model(input_ids=ids, attention_mask=mask, labels=labels).logits
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
    result = {
        "benchmark": "marian_fine_tune_peer",
        "peak": args.peak,
        "updates": args.updates,
        "train_seconds": round(time.perf_counter() - start, 1),
    }
    model.eval()
    for split, files in (("dev", args.dev), ("test", args.test)):
        if not files:
            continue
        outputs = _translate(torch, model, tokenizer, _lines(files[0]))
        references = [_lines(files[1])]
        result[split] = [
            round(sacrebleu.corpus_bleu(outputs, references).score, 2),
            round(sacrebleu.corpus_chrf(outputs, references).score, 2),
        ]
        if args.output:
            with open(f"{args.output}.{split}.txt", "w", encoding="utf-8") as f:
                f.write("\n".join(outputs) + "\n")
    result.update(cpu_fields())
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
