import sys

import numpy as np
import pytest

from keras_transformer.decoding import DecodingConfig, translate
from keras_transformer.evaluation import evaluate, translate_texts
from tests.keras_transformer.evaluation.conftest import detokenize, tokenize

SOURCES = ["the cat sat", "on the mat", "the", "cat sat on the well-known mat"]
REFERENCES = ["the cat sat", "on the mat", "the", "the cat sat on the mat"]


def test_translate_texts_keeps_the_input_order(tiny_model):
    outputs = translate_texts(
        tiny_model,
        SOURCES,
        tokenize,
        detokenize,
        DecodingConfig(method="beam", beam_size=2, max_extra_length=3),
        batch_size=2,
        jit_compile=False,
    )
    # One uncompiled batch of all four, in input order, must give the same.
    batch = np.zeros((len(SOURCES), 8), "int32")
    for row, ids in enumerate(tokenize(SOURCES)):
        batch[row, : len(ids)] = ids
    ids, _ = translate(
        tiny_model, batch, DecodingConfig(beam_size=2, max_extra_length=3)
    )
    for output, hypothesis in zip(outputs, np.array(ids)[:, 0], strict=True):
        tokens = []
        for token in hypothesis.tolist():
            if token in (0, 3):
                break
            tokens.append(token)
        assert [output] == detokenize([tokens])


def greedy_evaluate(model, lines, **kwargs):
    """`evaluate` of the test sentences, greedy, its report into `lines`."""
    return evaluate(
        model,
        SOURCES,
        REFERENCES,
        tokenize,
        detokenize,
        DecodingConfig(method="greedy", max_extra_length=3),
        print_fn=lines.append,
        jit_compile=False,
        **kwargs,
    )


def test_evaluate_prints_the_signature_and_labels_paper_style(tiny_model):
    lines = []
    result = greedy_evaluate(tiny_model, lines, target_language="de", paper_style=True)
    assert len(result["hypotheses"]) == len(SOURCES)
    assert 0 <= result["bleu"] <= 100 and 0 <= result["chrf"] <= 100
    assert "nrefs:1|case:mixed" in lines[0] and lines[0].startswith("sacreBLEU BLEU")
    assert result["bleu_signature"] in lines[0] and "tok:13a" in lines[0]
    assert lines[1].startswith("sacreBLEU chrF")
    assert result["chrf_signature"] in lines[1] and "nc:6" in lines[1]
    assert "paper" in lines[2] and "not a sacreBLEU score" in lines[2]


def test_evaluate_rejects_mismatched_lengths(tiny_model):
    with pytest.raises(ValueError, match="len\\(references\\)=1"):
        evaluate(tiny_model, SOURCES, REFERENCES[:1], tokenize, detokenize)


def test_evaluate_scores_bleu_with_the_target_languages_tokenizer(tiny_model):
    lines = []
    result = greedy_evaluate(tiny_model, lines, target_language="zh_TW")
    assert "tok:zh" in result["bleu_signature"] and "tok:zh" in lines[0]
    assert lines[1].startswith("sacreBLEU chrF")


def test_evaluate_checks_the_language_before_decoding(monkeypatch):
    # No model: the errors must come before any decoding.
    monkeypatch.setitem(sys.modules, "MeCab", None)
    with pytest.raises(ValueError, match="keras-transformer\\[ja\\]"):
        evaluate(None, SOURCES, REFERENCES, tokenize, detokenize, target_language="ja")
    with pytest.raises(ValueError, match="Received: target_language='en'"):
        evaluate(
            None,
            SOURCES,
            REFERENCES,
            tokenize,
            detokenize,
            target_language="en",
            paper_style=True,
        )
