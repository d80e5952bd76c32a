import pytest

from keras_transformer.evaluation import paper_style_bleu, split_compounds


def test_split_compounds_as_get_ende_bleu():
    assert split_compounds("a well-known fact") == "a well ##AT##-##AT## known fact"
    # Non-overlapping matches, like Perl's s///g.
    assert split_compounds("a-b-c") == "a ##AT##-##AT## b-c"
    assert split_compounds("a - b") == "a - b"


def test_compound_splitting_gives_partial_credit():
    # "well-known" vs "well-made": split, "well" and "-" still match.
    split = paper_style_bleu(["a well-known fact ."], ["a well-made fact ."], "de")
    assert 0 < split < 100
    assert paper_style_bleu(
        ["the cat sat ."], ["the cat sat ."], "de"
    ) == pytest.approx(100)


@pytest.mark.parametrize("code", ["de", "de-AT", "fr", "fr_CA"])
def test_accepts_table_2_target_languages(code):
    assert paper_style_bleu(["peut-être ."], ["peut-être ."], code) == pytest.approx(
        100
    )


@pytest.mark.parametrize("code", ["en", "zh", "ja", None])
def test_refuses_other_target_languages(code):
    with pytest.raises(ValueError, match="Table 2") as info:
        paper_style_bleu(["a"], ["a"], code)
    assert f"Received: target_language={code!r}" in str(info.value)


def test_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="len\\(references\\)=2"):
        paper_style_bleu(["a"], ["a", "b"], "de")
