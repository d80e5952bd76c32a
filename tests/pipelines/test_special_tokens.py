from pipelines.tokenizers import special_tokens


def test_ids_are_fixed():
    assert (
        special_tokens.PAD_ID,
        special_tokens.UNK_ID,
        special_tokens.BOS_ID,
        special_tokens.EOS_ID,
    ) == (0, 1, 2, 3)
    assert special_tokens.RESERVED_PIECES == ("<pad>", "<unk>", "<s>", "</s>")


def test_tokenizers_agree_with_special_ids(sp_tokenizer):
    pieces = sp_tokenizer.id_to_piece([0, 1, 2, 3]).numpy().tolist()
    assert [p.decode() for p in pieces] == list(special_tokens.RESERVED_PIECES)
