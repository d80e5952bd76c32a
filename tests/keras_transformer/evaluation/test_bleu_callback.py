import sys

import pytest

from keras_transformer.decoding import DecodingConfig
from keras_transformer.evaluation import BleuCallback
from tests.keras_transformer.evaluation.conftest import detokenize, tokenize


def test_logs_bleu_every_n_steps(tiny_model, capsys):
    callback = BleuCallback(
        ["the cat sat", "on the mat"],
        ["the cat sat", "on the mat"],
        tokenize,
        detokenize,
        DecodingConfig(method="greedy", max_extra_length=2),
        target_language="de",
        every_n_steps=2,
        jit_compile=False,
    )
    callback.set_model(tiny_model)
    logged = []
    for step in range(5):
        logs = {"loss": 1.0}
        callback.on_train_batch_end(step, logs)
        logged.append("dev_bleu" in logs and "dev_chrf" in logs)
    assert logged == [False, True, False, True, False]
    assert [step for step, _ in callback.scores] == [2, 4]
    assert all(0 <= bleu <= 100 for _, bleu in callback.scores)
    output = capsys.readouterr().out
    assert "dev BLEU" in output and "chrF" in output and "tok:13a" in output


def test_rejects_a_non_positive_interval():
    with pytest.raises(ValueError, match="every_n_steps=0"):
        BleuCallback(["a"], ["a"], tokenize, detokenize, every_n_steps=0)


def test_decodes_greedily_by_default():
    callback = BleuCallback(["a"], ["a"], tokenize, detokenize)
    assert callback.config == DecodingConfig(method="greedy")


def test_bleu_follows_the_target_language():
    callback = BleuCallback(["a"], ["a"], tokenize, detokenize, target_language="zh")
    assert callback.tokenize == "zh"
    assert BleuCallback(["a"], ["a"], tokenize, detokenize).tokenize == "13a"


def test_a_missing_mecab_fails_when_the_callback_is_made(monkeypatch):
    monkeypatch.setitem(sys.modules, "mecab_ko", None)
    with pytest.raises(ValueError, match="keras-transformer\\[ko\\]"):
        BleuCallback(["a"], ["a"], tokenize, detokenize, target_language="ko")
