"""The Marian import against the reference implementation, `transformers`.

One Hugging Face Marian folder is built for the module (`marian_reference`:
SentencePiece models and a small `MarianMTModel` trained briefly on the
bundled corpus, saved by `transformers`), imported once, and compared with
`MarianMTModel` itself: logits, greedy and beam outputs, the export, and
CTranslate2's converter of the same folder as a third implementation.
"""

import json
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import pipelines  # noqa: E402
from keras_transformer.decoding.decoding_config import DecodingConfig  # noqa: E402
from keras_transformer.decoding.translate import translate  # noqa: E402
from keras_transformer.runs import UserError, load_run  # noqa: E402
from keras_transformer.runs.marian_import import (  # noqa: E402
    import_marian,
    read_marian_folder,
)
from tests.marian_reference import build_marian_folder, sample_sentences  # noqa: E402

# HF's `max_length` counts the decoder's start token; ours counts outputs.
HF_MAX_LENGTH = 128


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """`{"folder", "run", "hf_model", "hf_tokenizer", "marian_ids"}`."""
    root = tmp_path_factory.mktemp("marian")
    folder = build_marian_folder(str(root / "hf"))
    run = str(root / "run")
    import_marian(folder, run)
    config = json.load(open(os.path.join(folder, "config.json")))
    vocab = json.load(open(os.path.join(folder, "vocab.json")))
    _, marian_ids = pipelines.marian_vocabulary(
        vocab, config["pad_token_id"], config["eos_token_id"]
    )
    return {
        "folder": folder,
        "run": run,
        "hf_model": transformers.MarianMTModel.from_pretrained(folder).eval(),
        "hf_tokenizer": transformers.MarianTokenizer.from_pretrained(folder),
        "marian_ids": marian_ids,
    }


def _hf_generate(imported, sentences, **options):
    """HF's outputs as Marian ids, without the start token, eos or pad."""
    model, tokenizer = imported["hf_model"], imported["hf_tokenizer"]
    pad, eos = model.config.pad_token_id, model.config.eos_token_id
    batch = tokenizer(sentences, return_tensors="pt", padding=True)
    with torch.no_grad():
        output = model.generate(
            **batch, max_length=HF_MAX_LENGTH, bad_words_ids=[[pad]], **options
        )
    outputs = []
    for row in output.tolist():
        assert len(row) < HF_MAX_LENGTH or eos in row[1:], "an output hit the limit"
        outputs.append([i for i in row[1:] if i not in (pad, eos)])
    return outputs


def _our_greedy(imported, sentences):
    """Our greedy outputs (the library's `translate`) as Marian ids."""
    loaded = load_run(imported["run"], seeded=False)
    source = pipelines.encode_sources(loaded.tokenizer, sentences, 512).to_tensor()
    ids, _ = translate(
        loaded.model,
        source,
        DecodingConfig(method="greedy", max_extra_length=HF_MAX_LENGTH),
    )
    return _ours_as_marian(imported, np.asarray(ids)[:, 0].tolist())


def _ours_as_marian(imported, ids):
    marian_ids = imported["marian_ids"]
    return [[marian_ids[i] for i in row if i > 3 or i == 1] for row in ids]


def test_logits_equal_the_reference_on_a_padded_batch(imported):
    loaded = load_run(imported["run"], seeded=False)
    model, tokenizer = imported["hf_model"], imported["hf_tokenizer"]
    sentences = sample_sentences()[:8]
    batch = tokenizer(sentences, return_tensors="pt", padding=True)
    assert not batch["attention_mask"].all()  # padding is exercised
    generator = torch.Generator().manual_seed(0)
    targets = torch.randint(4, 200, (len(sentences), 9), generator=generator)
    targets[:, 0] = model.config.decoder_start_token_id
    with torch.no_grad():
        reference = model(**batch, decoder_input_ids=targets).logits.numpy()
    marian_ids = imported["marian_ids"]
    ours_of = {marian: ours for ours, marian in enumerate(marian_ids) if ours != 2}
    to_ours = np.vectorize(lambda i: ours_of[i])
    source = np.where(
        batch["attention_mask"].numpy() == 1, to_ours(batch["input_ids"]), 0
    )
    target = to_ours(targets.numpy())
    target[:, 0] = pipelines.BOS_ID
    logits = np.asarray(
        loaded.model(
            {"source_ids": source.astype("int32"), "target_ids": target.astype("int32")}
        )
    )
    # Our vocabulary in Marian's order (our bos, a copy of pad, left out).
    ours = logits[..., [ours_of[i] for i in range(len(marian_ids) - 1)]]
    np.testing.assert_allclose(ours, reference, atol=1e-4)


def test_greedy_outputs_equal_generate_with_one_beam(imported):
    sentences = sample_sentences()
    reference = _hf_generate(imported, sentences, num_beams=1, do_sample=False)
    ours = _our_greedy(imported, sentences)
    assert len({tuple(row) for row in reference}) > 20  # input-dependent outputs
    assert ours == reference


def test_beam_outputs_equal_generate_with_four_beams(imported):
    """Our search is exact: it stops when no running beam can beat the
    finished ones at the length limit (HF's `early_stopping="never"`), and
    it never generates pad, with pad out of the softmax (HF's
    `renormalize_logits=True`); BUILD_NOTES, "Imported models"."""
    from keras_transformer.translation import Translator

    translator = Translator.from_run(imported["run"])
    sentences = sample_sentences()
    reference = _hf_generate(
        imported,
        sentences,
        num_beams=4,
        length_penalty=1.0,
        early_stopping="never",
        renormalize_logits=True,
    )
    tokenizer = imported["hf_tokenizer"]
    expected = tokenizer.batch_decode(reference, skip_special_tokens=True)
    ours = translator.translate(
        sentences, beam_size=4, max_extra_length=HF_MAX_LENGTH - 1
    )
    assert translator.decoding.length_normalization == "average"
    # The last line is empty: ours is empty (BUILD_NOTES, "Bad input"),
    # Hugging Face translates the lone eos.
    assert ours[:-1] == expected[:-1]
    assert sentences[-1] == "" and ours[-1] == ""


def test_the_export_translates_as_the_run(imported, tmp_path):
    from keras_transformer.translation import Translator
    from keras_transformer.workflows.export_run import export

    path = export(imported["run"])
    exported = Translator.from_export(path)
    in_process = Translator.from_run(imported["run"])
    sentences = sample_sentences()
    assert exported.translate(sentences) == in_process.translate(sentences)
    record = json.load(open(os.path.join(path, "assets.extra", "record.json")))
    assert record["tokenizer"]["kind"] == "marian"
    assert record["decoding"]["length_normalization"] == "average"
    for name in ("source.spm", "target.spm", "vocab.json"):
        assert os.path.isfile(os.path.join(path, "assets.extra", name))


def test_ctranslate2_converts_the_same_folder_to_the_same_greedy_outputs(
    imported, tmp_path
):
    """A third implementation agrees: CTranslate2's converter of the folder."""
    ctranslate2 = pytest.importorskip("ctranslate2")
    from ctranslate2.converters import TransformersConverter

    output = str(tmp_path / "ct2")
    TransformersConverter(imported["folder"]).convert(output)
    translator = ctranslate2.Translator(output, device="cpu", intra_threads=1)
    tokenizer = imported["hf_tokenizer"]
    sentences = sample_sentences()[:50]
    tokens = [
        tokenizer.convert_ids_to_tokens(tokenizer(s)["input_ids"]) for s in sentences
    ]
    results = translator.translate_batch(
        tokens, beam_size=1, max_decoding_length=HF_MAX_LENGTH - 1
    )
    theirs = [tokenizer.convert_tokens_to_ids(r.hypotheses[0]) for r in results]
    ours = _our_greedy(imported, sentences)
    agree = sum(a == b for a, b in zip(ours, theirs, strict=True))
    # Float32 near-ties between two libraries may flip a token or two.
    assert agree >= len(sentences) - 2, agree


def test_the_record_names_the_source_folder_and_its_weights(imported):
    record = json.load(
        open(os.path.join(imported["run"], "imported", "model.json"), encoding="utf-8")
    )
    assert record["imported_from"]["format"] == "huggingface-marian"
    assert record["imported_from"]["weights"] == "model.safetensors"
    assert record["imported_from"]["weights_sha256"].startswith("sha256:")


@pytest.mark.parametrize(
    "field, value",
    [
        ("normalize_before", True),
        ("add_final_layer_norm", True),
        ("activation_function", "gelu_new"),
        ("model_type", "bart"),
        ("share_encoder_decoder_embeddings", False),
    ],
)
def test_a_config_our_model_cannot_represent_is_refused_naming_the_field(
    imported, tmp_path, field, value
):
    folder = tmp_path / "hf"
    folder.mkdir()
    for name in os.listdir(imported["folder"]):
        os.symlink(os.path.join(imported["folder"], name), folder / name)
    config = json.load(open(os.path.join(imported["folder"], "config.json")))
    config[field] = value
    (folder / "config.json").unlink()
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(UserError, match=f"{field}={value!r}"):
        read_marian_folder(folder)


def test_a_folder_without_weights_is_named(tmp_path, imported):
    folder = tmp_path / "hf"
    folder.mkdir()
    for name in ("config.json", "source.spm", "target.spm", "vocab.json"):
        os.symlink(os.path.join(imported["folder"], name), folder / name)
    with pytest.raises(FileNotFoundError, match="model.safetensors or pytorch_model"):
        read_marian_folder(folder)
