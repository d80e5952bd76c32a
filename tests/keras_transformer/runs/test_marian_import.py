"""The Marian import against the reference implementation, `transformers`.

One Hugging Face Marian folder and the reference's outputs on it are made
once per test run, in a process of their own (`tests/marian_reference.py`:
torch, transformers and CTranslate2, never TensorFlow), the folder is
imported once, and our logits, greedy and beam outputs and export are
compared with them.
"""

import dataclasses
import importlib.util
import json
import os

import keras
import numpy as np
import pytest

if not all(importlib.util.find_spec(name) for name in ("torch", "transformers")):
    pytest.skip("the reference needs torch and transformers", allow_module_level=True)

import pipelines  # noqa: E402
from keras_transformer.decoding.decoding_config import DecodingConfig  # noqa: E402
from keras_transformer.decoding.translate import translate  # noqa: E402
from keras_transformer.runs import UserError, load_run  # noqa: E402
from keras_transformer.runs.marian_import import (  # noqa: E402
    import_marian,
    marian_recipe,
    read_marian_folder,
)
from keras_transformer.runs.prepare import prepare  # noqa: E402
from keras_transformer.runs.training_cache import read_cache  # noqa: E402
from tests.marian_reference import (  # noqa: E402
    HF_MAX_LENGTH,
    corpus_pairs,
    sample_sentences,
    shared_reference,
)

# The export's `max_extra_length_limit` (the imported recipe's decoding).
EXPORT_EXTRA_LENGTH = 50


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """`{"folder", "run", "reference", "marian_ids"}`."""
    folder, reference = shared_reference(tmp_path_factory)
    run = str(tmp_path_factory.mktemp("marian") / "run")
    import_marian(folder, run)
    config = json.load(open(os.path.join(folder, "config.json")))
    vocab = json.load(open(os.path.join(folder, "vocab.json")))
    _, marian_ids = pipelines.marian_vocabulary(
        vocab, config["pad_token_id"], config["eos_token_id"]
    )
    return {
        "folder": folder,
        "run": run,
        "reference": reference,
        "marian_ids": marian_ids,
    }


def _our_greedy(imported):
    """Our greedy outputs (the library's `translate`) of `sample_sentences`,
    as Marian ids; computed once for the module."""
    if "greedy" not in imported:
        loaded = load_run(imported["run"], seeded=False)
        source = pipelines.encode_sources(
            loaded.tokenizer, sample_sentences(), 512
        ).to_tensor()
        ids, _ = translate(
            loaded.model,
            source,
            DecodingConfig(method="greedy", max_extra_length=HF_MAX_LENGTH),
        )
        imported["greedy"] = _ours_as_marian(imported, np.asarray(ids)[:, 0].tolist())
    return imported["greedy"]


def _our_beam(imported):
    """Our translations of `sample_sentences` with the imported recipe's
    decoding (`Translator.from_run`: beam 4, Hugging Face's default stopping
    and pad ban), computed once for the module. Up to 50 tokens past each
    source's length, the export's limit (every reference output is shorter,
    and the tests compare them with Hugging Face's, searched to
    `HF_MAX_LENGTH`)."""
    from keras_transformer.translation import Translator

    if "beam" not in imported:
        translator = Translator.from_run(imported["run"])
        decoding = translator.decoding
        assert (decoding.method, decoding.beam_size) == ("beam", 4)
        assert decoding.length_normalization == "average"
        assert decoding.early_stopping == "heuristic"
        assert decoding.pad_in_softmax
        imported["beam"] = translator.translate(
            sample_sentences(), max_extra_length=EXPORT_EXTRA_LENGTH
        )
    return imported["beam"]


def _ours_as_marian(imported, ids):
    marian_ids = imported["marian_ids"]
    return [[marian_ids[i] for i in row if i > 3 or i == 1] for row in ids]


def test_logits_equal_the_reference_on_a_padded_batch(imported):
    loaded = load_run(imported["run"], seeded=False)
    inputs = imported["reference"]["logits_inputs"]
    mask = np.array(inputs["attention_mask"])
    assert not mask.all()  # padding is exercised
    marian_ids = imported["marian_ids"]
    ours_of = {marian: ours for ours, marian in enumerate(marian_ids) if ours != 2}
    to_ours = np.vectorize(lambda i: ours_of[i])
    source = np.where(mask == 1, to_ours(np.array(inputs["input_ids"])), 0)
    target = to_ours(np.array(inputs["decoder_input_ids"]))
    target[:, 0] = pipelines.BOS_ID
    logits = np.asarray(
        loaded.model(
            {"source_ids": source.astype("int32"), "target_ids": target.astype("int32")}
        )
    )
    # Our vocabulary in Marian's order (our bos, a copy of pad, left out).
    ours = logits[..., [ours_of[i] for i in range(len(marian_ids) - 1)]]
    np.testing.assert_allclose(ours, imported["reference"]["logits"], atol=1e-4)


def test_fine_tuning_data_gives_the_reference_training_loss(imported, tmp_path):
    """`prepare` on an imported run with training files (what `train
    --train` does first): the cached pairs, batched, give the imported
    model Hugging Face's training loss on the same pairs, so targets are
    split by target.spm and the decoder starts as Marian's."""
    run = str(tmp_path / "run")
    import_marian(imported["folder"], run)
    pairs = corpus_pairs("train", 8)
    (tmp_path / "train.tsv").write_text("".join(f"{s}\t{t}\n" for s, t in pairs))
    recipe = load_run(run, seeded=False).recipe.with_overrides(
        {
            "data_source": "files",
            "train_files": [[str(tmp_path / "train.tsv")]],
            "label_smoothing": 0.0,
        }
    )
    prepare(recipe, run)
    loaded = load_run(run, seeded=False)
    assert loaded.recipe.model_overrides == recipe.model_overrides
    rows = [[np.asarray(part) for part in row] for row in read_cache(loaded.run)]
    assert len(rows) == len(pairs)

    def padded(index):
        width = max(len(row[index]) for row in rows)
        return np.array(
            [np.pad(row[index], (0, width - len(row[index]))) for row in rows],
            dtype="int32",
        )

    source, target_in, target_out = padded(0), padded(1), padded(2)
    assert (target_in[:, 0] == pipelines.BOS_ID).all()
    logits = loaded.model({"source_ids": source, "target_ids": target_in})
    losses = keras.losses.sparse_categorical_crossentropy(
        target_out, logits, from_logits=True
    )
    mask = target_out != 0
    loss = float(np.sum(np.asarray(losses) * mask) / mask.sum())
    np.testing.assert_allclose(loss, imported["reference"]["loss"], rtol=1e-5)


def test_greedy_outputs_equal_generate_with_one_beam(imported):
    reference = imported["reference"]["greedy"]
    # No output reaches the limit, where Hugging Face forces eos.
    assert imported["reference"]["outputs_at_limit"] == 0
    ours = _our_greedy(imported)
    # Input-dependent outputs: more than a quarter of the lines distinct (the
    # random model gives 19 distinct of 53 on an AVX2 CPU, more with AVX-512).
    assert len({tuple(row) for row in reference}) > len(reference) // 4
    assert ours == reference


def test_default_beam_outputs_equal_generate_with_its_defaults(imported):
    """The imported recipe searches as `generate(num_beams=4,
    length_penalty=1.0)` does: Hugging Face's heuristic stopping
    (`early_stopping=False`) and pad banned after the softmax
    (`bad_words_ids`); BUILD_NOTES, "Imported models"."""
    sentences = sample_sentences()
    reference = imported["reference"]
    expected = reference["beam_default_text"]
    ours = _our_beam(imported)
    # The last line is empty: ours is empty (BUILD_NOTES, "Bad input"),
    # Hugging Face translates the lone eos.
    assert ours[:-1] == expected[:-1]
    assert sentences[-1] == "" and ours[-1] == ""
    # The defaults matter here: the exact search differs on some lines.
    assert reference["beam_default"] != reference["beam"]


def test_exact_beam_outputs_equal_generate_without_early_stopping(imported):
    """With our exact search (it stops when no running beam can beat the
    finished ones at the length limit: HF's `early_stopping="never"`) and pad
    out of the softmax (HF's `renormalize_logits=True`), as trained runs
    decode."""
    loaded = load_run(imported["run"], seeded=False)
    source = pipelines.encode_sources(
        loaded.tokenizer, sample_sentences(), 512
    ).to_tensor()
    decoding = dataclasses.replace(
        loaded.recipe.decoding,
        early_stopping="exact",
        pad_in_softmax=False,
        max_extra_length=EXPORT_EXTRA_LENGTH,
    )
    ids, _ = translate(loaded.model, source, decoding)
    ours = _ours_as_marian(imported, np.asarray(ids)[:, 0].tolist())
    # The last line is empty (as above).
    assert ours[:-1] == imported["reference"]["beam"][:-1]


def test_the_export_translates_as_the_run(imported, tmp_path):
    from keras_transformer.translation import Translator
    from keras_transformer.workflows.export_run import export

    path = export(imported["run"])
    exported = Translator.from_export(path)
    # The in-process translations were made before the export or are made
    # after it: `export` seeds Keras, which frees the SentencePiece resources
    # of tokenizers loaded before (BUILD_NOTES).
    assert exported.decoding == Translator.from_run(imported["run"]).decoding
    ours = exported.translate(sample_sentences(), max_extra_length=EXPORT_EXTRA_LENGTH)
    assert ours == _our_beam(imported)
    record = json.load(open(os.path.join(path, "assets.extra", "record.json")))
    assert record["tokenizer"]["kind"] == "marian"
    assert record["decoding"]["length_normalization"] == "average"
    assert record["decoding"]["early_stopping"] == "heuristic"
    assert record["decoding"]["pad_in_softmax"] is True
    for name in ("source.spm", "target.spm", "vocab.json"):
        assert os.path.isfile(os.path.join(path, "assets.extra", name))


def test_ctranslate2_converts_the_same_folder_to_the_same_greedy_outputs(imported):
    """A third implementation agrees: CTranslate2's converter of the folder."""
    theirs = imported["reference"].get("ctranslate2_greedy")
    if theirs is None:
        pytest.skip("ctranslate2 is not installed")
    ours = _our_greedy(imported)
    agree = sum(a == b for a, b in zip(ours, theirs, strict=True))
    # Float32 near-ties between two libraries may flip a token or two.
    assert agree >= len(ours) - 2, agree


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
        ("early_stopping", "sometimes"),
        ("renormalize_logits", "yes"),
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


def test_a_banned_id_other_than_pad_is_refused_naming_it(imported, tmp_path):
    """Our searches ban pad only: another id in `bad_words_ids` is refused."""
    folder = tmp_path / "hf"
    folder.mkdir()
    for name in os.listdir(imported["folder"]):
        if name != "generation_config.json":
            os.symlink(os.path.join(imported["folder"], name), folder / name)
    source = os.path.join(imported["folder"], "generation_config.json")
    generation = json.load(open(source))
    generation["bad_words_ids"] = [[5]]
    (folder / "generation_config.json").write_text(json.dumps(generation))
    with pytest.raises(UserError, match=r"bad_words_ids=\[\[5\]\]"):
        read_marian_folder(folder)


@pytest.mark.parametrize(
    "generation, early_stopping, pad_in_softmax",
    [
        ({}, "heuristic", True),
        ({"early_stopping": False}, "heuristic", True),
        ({"early_stopping": True}, "k_finished", True),
        ({"early_stopping": "never", "renormalize_logits": True}, "exact", False),
    ],
)
def test_the_search_follows_the_folders_generation_config(
    imported, tmp_path, generation, early_stopping, pad_in_softmax
):
    folder = tmp_path / "hf"
    folder.mkdir()
    for name in os.listdir(imported["folder"]):
        if name != "generation_config.json":
            os.symlink(os.path.join(imported["folder"], name), folder / name)
    (folder / "generation_config.json").write_text(json.dumps(generation))
    read = read_marian_folder(folder)
    assert (read.early_stopping, read.pad_in_softmax) == (
        early_stopping,
        pad_in_softmax,
    )
    decoding = marian_recipe(read, 200).decoding
    assert decoding.early_stopping == early_stopping
    assert decoding.pad_in_softmax == pad_in_softmax


def test_a_folder_without_weights_is_named(tmp_path, imported):
    folder = tmp_path / "hf"
    folder.mkdir()
    for name in ("config.json", "source.spm", "target.spm", "vocab.json"):
        os.symlink(os.path.join(imported["folder"], name), folder / name)
    with pytest.raises(FileNotFoundError, match="model.safetensors or pytorch_model"):
        read_marian_folder(folder)
