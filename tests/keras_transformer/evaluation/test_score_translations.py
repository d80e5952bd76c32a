import pytest
import sacrebleu

from keras_transformer.evaluation import score_translations


def test_matches_sacrebleu_and_reports_signatures():
    hypotheses = ["the cat sat on the mat .", "a dog barked loudly"]
    references = ["the cat sat on a mat .", "the dog barked loudly"]
    result = score_translations(hypotheses, references, paper_style=True)
    expected = sacrebleu.corpus_bleu(hypotheses, [references]).score
    assert result["bleu"] == pytest.approx(expected)
    assert result["chrf"] == pytest.approx(
        sacrebleu.corpus_chrf(hypotheses, [references]).score
    )
    assert "nrefs:1" in result["bleu_signature"]
    assert "tok:13a" in result["bleu_signature"]
    assert "nc:6" in result["chrf_signature"]
    assert "paper" in result["paper_style_label"]
    assert 0 < result["paper_style_bleu"] < 100


def test_perfect_translations_score_100():
    result = score_translations(
        ["the cat sat on the mat ."] * 2, ["the cat sat on the mat ."] * 2
    )
    assert result["bleu"] == pytest.approx(100)
    assert result["chrf"] == pytest.approx(100)
    assert "paper_style_bleu" not in result


def test_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="len\\(hypotheses\\)=1"):
        score_translations(["a"], ["a", "b"])
