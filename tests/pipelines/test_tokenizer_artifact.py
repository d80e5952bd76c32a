import json

import pytest

from pipelines import SentencePieceTokenizer, WordPieceTokenizer, load_tokenizer
from pipelines.tokenizers.tokenizer_artifact import content_fingerprint, read_artifact


def test_fingerprint_depends_on_kind_and_content():
    a = content_fingerprint("wordpiece", b"x")
    assert a == content_fingerprint("wordpiece", b"x")
    assert a != content_fingerprint("sentencepiece", b"x")
    assert a != content_fingerprint("wordpiece", b"y")


def test_corrupt_artifacts(sp_tokenizer, tmp_path):
    path = tmp_path / "t.json"
    sp_tokenizer.save(path)
    record = json.loads(path.read_text())
    record["payload"] = record["payload"][:-8] + "AAAAAAA="
    path.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="corrupt"):
        load_tokenizer(path)
    record["special_ids"]["eos"] = 1
    path.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="special ids"):
        read_artifact(path)
    path.write_text("not json")
    with pytest.raises(ValueError, match="invalid JSON"):
        read_artifact(path)


# Artefacts as written by the current format (version 1), byte for byte: a
# refactoring must keep reading existing files to the same tokenizers. The
# SentencePiece payload is a hand-made 11-piece BPE model proto (identity
# normalisation); the WordPiece one is a 10-piece vocabulary.
SENTENCEPIECE_ARTIFACT = (
    b'{"format": "pipelines.tokenizer", "version": 1, "kind": "sentencepiece", '
    b'"vocab_size": 11, "special_ids": {"pad": 0, "unk": 1, "bos": 2, "eos": 3}, '
    b'"fingerprint": "sha256:d9c6d5efa69882f0b1d0fe70a7037959'
    b'877595e119ebeb00b0a33e1421c0df4a", "payload": "'
    b"Cg4KBTxwYWQ+FQAAAAAYAwoOCgU8dW5rPhUAAAAAGAIKDAoDPHM+FQAAAAAYAwoN"
    b"CgQ8L3M+FQAAAAAYAwoMCgPiloEVAAAAgBgBCgoKAWEVAACAvxgBCgoKAWIVAAAA"
    b"wBgBCg0KBOKWgWEVAABAwBgBCg0KBOKWgWIVAACAwBgBCgsKAmFiFQAAoMAYAQoO"
    b"CgXiloFhYhUAAMDAGAESEBgCIAvAAgHIAgLQAgPYAgAaDgoIaWRlbnRpdHkYASAB"
    b'"}'
)
WORDPIECE_ARTIFACT = (
    b'{"format": "pipelines.tokenizer", "version": 1, "kind": "wordpiece", '
    b'"vocab_size": 10, "special_ids": {"pad": 0, "unk": 1, "bos": 2, "eos": 3}, '
    b'"fingerprint": "sha256:46930232b718d3a650a622ed6792f648'
    b'8f7701e80b4f6e7a82f3ae11108818d8", "payload": "'
    b"PHBhZD4KPHVuaz4KPHM+Cjwvcz4KT3Blbgp0aGUKZmlsZQojI3MKLgojIy4="
    b'"}'
)


@pytest.mark.parametrize(
    "artifact, cls, texts, ids",
    [
        (
            SENTENCEPIECE_ARTIFACT,
            SentencePieceTokenizer,
            ["ab a b", "ba c"],
            [[10, 7, 8], [8, 5, 4, 1]],
        ),
        (
            WORDPIECE_ARTIFACT,
            WordPieceTokenizer,
            ["Open the files.", "Open xyz"],
            [[4, 5, 6, 7, 9], [4, 1]],
        ),
    ],
)
def test_reads_files_of_the_current_format(artifact, cls, texts, ids, tmp_path):
    path = tmp_path / "stored.json"
    path.write_bytes(artifact)
    recorded = json.loads(artifact)["fingerprint"]
    for tokenizer in (load_tokenizer(path), cls.load(path)):
        assert type(tokenizer) is cls
        assert tokenizer.fingerprint == recorded
        assert tokenizer.vocab_size == json.loads(artifact)["vocab_size"]
        assert tokenizer.tokenize(texts).to_list() == ids
    # Saving writes the same bytes again.
    assert tokenizer.save(tmp_path / "again.json") == recorded
    assert (tmp_path / "again.json").read_bytes() == artifact
