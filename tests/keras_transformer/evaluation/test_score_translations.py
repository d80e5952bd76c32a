import pytest
import sacrebleu

from keras_transformer.evaluation import score_translations


def test_matches_sacrebleu_and_reports_signatures():
    hypotheses = ["the cat sat on the mat .", "a dog barked loudly"]
    references = ["the cat sat on a mat .", "the dog barked loudly"]
    result = score_translations(
        hypotheses, references, paper_style=True, target_language="de"
    )
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


def test_chinese_bleu_is_scored_on_characters():
    # Unsegmented Chinese: under 13a each sentence is one "word", so a single
    # wrong character leaves no matching n-gram. Under zh each character is a
    # token: 7 characters, 1 wrong, so the 1- to 4-gram precisions are 6/7,
    # 5/6, 4/5, 3/4 (product 3/7), the lengths agree (BP = 1), and
    # BLEU = 100 * (3/7) ** (1/4).
    hypotheses, references = ["我们喜欢猫和狗"], ["我们喜欢猫和鸟"]
    zh = score_translations(hypotheses, references, target_language="zh-Hans")
    assert zh["bleu"] == pytest.approx(100 * (3 / 7) ** 0.25)
    assert "tok:zh" in zh["bleu_signature"]
    assert zh["bleu"] == pytest.approx(
        sacrebleu.corpus_bleu(hypotheses, [references], tokenize="zh").score
    )
    unknown = score_translations(hypotheses, references)
    assert unknown["bleu"] == 0
    assert "tok:13a" in unknown["bleu_signature"]
    # chrF does not depend on the language.
    assert zh["chrf"] == pytest.approx(unknown["chrf"]) and 0 < zh["chrf"] < 100


def test_an_explicit_tokenizer_wins_over_the_language():
    sentences = ["我喜欢猫"]
    result = score_translations(
        sentences, sentences, tokenize="13a", target_language="zh"
    )
    assert "tok:13a" in result["bleu_signature"]


def test_paper_style_needs_a_table_2_target_language():
    with pytest.raises(ValueError, match="Received: target_language='zh'"):
        score_translations(["a"], ["a"], paper_style=True, target_language="zh")
    with pytest.raises(ValueError, match="Received: target_language=None"):
        score_translations(["a"], ["a"], paper_style=True)
