import json

import pytest

from pipelines import load_tokenizer
from pipelines.tokenizer_artifact import content_fingerprint, read_artifact


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
