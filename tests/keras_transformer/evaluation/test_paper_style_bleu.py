import pytest

from keras_transformer.evaluation import paper_style_bleu, split_compounds


def test_split_compounds_as_get_ende_bleu():
    assert split_compounds("a well-known fact") == "a well ##AT##-##AT## known fact"
    # Non-overlapping matches, like Perl's s///g.
    assert split_compounds("a-b-c") == "a ##AT##-##AT## b-c"
    assert split_compounds("a - b") == "a - b"


def test_compound_splitting_gives_partial_credit():
    # "well-known" vs "well-made": split, "well" and "-" still match.
    split = paper_style_bleu(["a well-known fact ."], ["a well-made fact ."])
    assert 0 < split < 100
    assert paper_style_bleu(["the cat sat ."], ["the cat sat ."]) == pytest.approx(100)


def test_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="len\\(references\\)=2"):
        paper_style_bleu(["a"], ["a", "b"])
