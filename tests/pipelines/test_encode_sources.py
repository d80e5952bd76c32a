import pytest
import tensorflow as tf

from pipelines import EOS_ID, encode_sources, transforms


def test_pieces_then_eos_and_truncation(sp_tokenizer):
    text = "The quick brown fox jumps over the lazy dog."
    pieces = sp_tokenizer.tokenize(tf.constant([text])).to_list()[0]
    assert len(pieces) > 5
    full = encode_sources(sp_tokenizer, [text]).to_list()[0]
    assert full == pieces + [EOS_ID]
    cut = encode_sources(sp_tokenizer, [text], max_length=4).to_list()[0]
    assert cut == pieces[:3] + [EOS_ID]
    # A row already short enough is left as it is.
    assert encode_sources(sp_tokenizer, [text], max_length=100).to_list()[0] == full


def test_empty_line_is_eos_only(sp_tokenizer):
    ids = encode_sources(sp_tokenizer, ["", "a"], max_length=8)
    assert ids.to_list()[0] == [EOS_ID]
    assert ids.dtype == tf.int32
    assert ids.to_tensor().shape[0] == 2


def test_invalid_utf8_is_replaced_as_python_does(sp_tokenizer):
    raw = b"caf\xe9 ok"
    replaced = raw.decode("utf-8", errors="replace")
    assert (
        encode_sources(sp_tokenizer, [raw]).to_list()
        == encode_sources(sp_tokenizer, [replaced]).to_list()
    )


def test_training_sources_are_the_same_ids(sp_tokenizer):
    # The training pipeline's sources go through the same function.
    pairs = tf.data.Dataset.from_tensor_slices((["Hello world.", ""], ["Hallo.", "x"]))
    sources = [
        s.numpy().tolist()
        for s, _ in pairs.apply(transforms.tokenize_pairs(sp_tokenizer, batch_size=2))
    ]
    assert sources == encode_sources(sp_tokenizer, ["Hello world.", ""]).to_list()


@pytest.mark.parametrize("max_length", [0, 1, 2.5, True])
def test_bad_max_length_names_the_value(sp_tokenizer, max_length):
    with pytest.raises(ValueError, match=f"Received: max_length={max_length!r}"):
        encode_sources(sp_tokenizer, ["a"], max_length=max_length)
