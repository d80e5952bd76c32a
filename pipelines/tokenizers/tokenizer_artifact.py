"""One-file tokenizer artefacts with a content fingerprint.

An artefact is a UTF-8 JSON object:

    {"format": "pipelines.tokenizer", "version": 1,
     "kind": "sentencepiece" | "wordpiece" | "symbols",
     "vocab_size": int, "special_ids": {"pad": 0, "unk": 1, "bos": 2, "eos": 3},
     "fingerprint": "sha256:<hex>", "payload": "<base64>"}

`payload` is the serialized SentencePiece model proto, or the WordPiece (or
whole-token symbol) vocabulary as newline-joined UTF-8. The fingerprint is the
SHA-256 of the kind and the payload bytes, so two tokenizers with equal
fingerprints map every text to the same ids: it is how checkpoints and exports
name the vocabulary they were trained with. Reading verifies the fingerprint
and the special ids.

This module is the file format only: `SubwordTokenizer` saves and loads
through it, and `pipelines.load_tokenizer` picks the class of the recorded
kind (`tokenizer_registry`).
"""

import base64
import hashlib
import json
import os

from pipelines.tokenizers.special_tokens import BOS_ID, EOS_ID, PAD_ID, UNK_ID

FORMAT = "pipelines.tokenizer"
VERSION = 1
SPECIAL_IDS = {"pad": PAD_ID, "unk": UNK_ID, "bos": BOS_ID, "eos": EOS_ID}


def content_fingerprint(kind: str, payload: bytes) -> str:
    """Returns `"sha256:<hex>"` of a tokenizer's kind and model bytes."""
    digest = hashlib.sha256(kind.encode("utf-8") + b"\0" + payload).hexdigest()
    return f"sha256:{digest}"


def write_artifact(
    path: str | os.PathLike, kind: str, payload: bytes, vocab_size: int
) -> str:
    """Writes a tokenizer artefact to `path`; returns its fingerprint."""
    fingerprint = content_fingerprint(kind, payload)
    record = {
        "format": FORMAT,
        "version": VERSION,
        "kind": kind,
        "vocab_size": int(vocab_size),
        "special_ids": SPECIAL_IDS,
        "fingerprint": fingerprint,
        "payload": base64.b64encode(payload).decode("ascii"),
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(record, handle)
    return fingerprint


def read_artifact(path: str | os.PathLike) -> tuple[str, bytes]:
    """Reads and verifies an artefact; returns `(kind, payload)`."""
    try:
        with open(path, encoding="utf-8") as handle:
            record = json.load(handle)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(
            f"Not a tokenizer artefact (invalid JSON: {error}). Received: path={path}"
        ) from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise ValueError(
            f"Not a tokenizer artefact (format is not {FORMAT!r}). "
            f"Received: path={path}"
        )
    if record.get("version") != VERSION:
        raise ValueError(
            f"Unsupported tokenizer artefact version; expected {VERSION}. "
            f"Received: version={record.get('version')!r} in {path}"
        )
    if record.get("special_ids") != SPECIAL_IDS:
        raise ValueError(
            f"Tokenizer special ids differ from this package's {SPECIAL_IDS}. "
            f"Received: special_ids={record.get('special_ids')!r} in {path}"
        )
    kind = record["kind"]
    payload = base64.b64decode(record["payload"])
    fingerprint = content_fingerprint(kind, payload)
    if fingerprint != record.get("fingerprint"):
        raise ValueError(
            f"Tokenizer artefact is corrupt: content fingerprint {fingerprint} "
            f"does not match the recorded one. Received: path={path}, "
            f"fingerprint={record.get('fingerprint')!r}"
        )
    return kind, payload
