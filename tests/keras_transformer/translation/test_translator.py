"""`Translator` from a run and from its export: the same translations as
`keras-transformer translate`, per-call search settings, bad input refused
naming the value."""

import numpy as np
import pytest

from keras_transformer import Parser, Translator, cli
from keras_transformer.decoding import DecodingConfig, translate
from keras_transformer.runs import load_run
from keras_transformer.runs.run_tokenizer import detokenize_fn, source_ids_fn

LINES = [
    "Open the file.",
    "",
    "Click the button to close the window and save your changes.",
    "Tools",
    "   ",
]


@pytest.fixture
def from_run(tiny_run):
    return Translator.from_run(str(tiny_run))


def test_from_run_translates_as_the_command_line_does(tiny_run, tmp_path):
    source, target = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    argv = ["translate", "--run-dir", str(tiny_run), "--input", str(source)]
    assert cli.main(argv + ["--output", str(target)]) == 0
    expected = target.read_text(encoding="utf-8").splitlines()
    # Loaded after the command (whose load seeds Keras: `load_run`), in the
    # command's default compute dtype.
    from_run = Translator.from_run(str(tiny_run), compute_dtype="auto")
    translations = from_run.translate(LINES)
    assert translations == expected and len(translations) == len(LINES)
    assert translations[1] == translations[4] == ""  # empty in, empty out
    # A file through the library: the same lines, in order.
    output = tmp_path / "library.txt"
    assert from_run.translate_file(str(source), str(output)) == len(LINES)
    assert output.read_text(encoding="utf-8").splitlines() == expected
    # Batches of one line each give the same translations.
    assert from_run.translate(LINES, batch_tokens=1, batch_size=1) == expected


def test_from_export_translates_as_from_run(exported_run):
    export = Translator.from_export(str(exported_run / "export" / "1"))
    run = Translator.from_run(str(exported_run))
    assert export.decoding == run.decoding  # the recipe's, recorded
    assert export.translate(LINES) == run.translate(LINES)
    assert export.translate(LINES, beam_size=1) == run.translate(LINES, beam_size=1)
    (exported,), (ran,) = (t.translate_n_best(LINES[:1], 2) for t in (export, run))
    assert [text for text, _ in exported] == [text for text, _ in ran]
    np.testing.assert_allclose([s for _, s in exported], [s for _, s in ran], 1e-5)
    # The export's limits are checked before the signature would fail.
    assert export.max_beam_size == 2
    with pytest.raises(
        ValueError, match="beam_size 3 is above the export's maximum beam size 2"
    ):
        export.translate(LINES, beam_size=3)
    with pytest.raises(ValueError, match="no `parse` signature"):
        Parser.from_export(str(exported_run / "export" / "1"))


def test_an_export_is_called_through_the_signature_of_the_calls_beam_size(
    exported_run,
):
    """`translate_beam_K`, whose first call prepares one search; an export
    without those signatures (written before them) through `translate`, with
    the same outputs."""
    from keras_transformer.translation.text_search import ExportSignature
    from savedmodels.saved_model_files import load_saved_model

    signatures = load_saved_model(str(exported_run / "export" / "1")).signatures
    called = []

    def recording(name):
        def call(**inputs):
            called.append((name, sorted(inputs)))
            return signatures[name](**inputs)

        return call

    recorded = {name: recording(name) for name in signatures}
    before = ExportSignature({"translate": recorded["translate"]}, "translate")
    now = ExportSignature(recorded, "translate")
    texts = LINES[:1] + LINES[2:4]
    for decoding, name in [
        (DecodingConfig(beam_size=2, alpha=0.6, n_best=2), "translate_beam_2"),
        (DecodingConfig(method="greedy"), "translate_beam_1"),
    ]:
        outputs = now(texts, decoding, n_best=decoding.n_best)
        scalars = ["alpha", "max_extra_length", "n_best", "text"]
        assert called[-1] == (name, scalars)
        expected = before(texts, decoding, n_best=decoding.n_best)
        assert called[-1] == ("translate", sorted(scalars + ["beam_size"]))
        np.testing.assert_array_equal(outputs["translations"], expected["translations"])
        np.testing.assert_allclose(outputs["scores"], expected["scores"], 1e-6)


def test_a_one_beam_call_is_greedy_search(from_run, tiny_run):
    loaded = load_run(str(tiny_run), seeded=False)
    texts = [line for line in LINES if line.strip()]
    ids = source_ids_fn(loaded.tokenizer, loaded.recipe.max_train_length)(texts)
    width = max(len(row) for row in ids)
    source = np.array([row + [0] * (width - len(row)) for row in ids], "int32")
    greedy, _ = translate(loaded.model, source, DecodingConfig(method="greedy"))
    rows = [[int(i) for i in row[0] if i > 3] for row in np.asarray(greedy)]
    expected = detokenize_fn(loaded.tokenizer)(rows)
    assert from_run.translate(texts, beam_size=1) == expected
    assert from_run.translate(texts, method="greedy") == expected
    # The recipe's beam (2) is the default; the call's setting is per call.
    assert from_run.decoding.beam_size == 2
    assert from_run.translate(texts) == from_run.translate(texts, beam_size=2)


def test_a_run_traces_only_the_beam_sizes_asked_once_each(tiny_run, monkeypatch):
    """In-process, a call traces the search of its own beam size
    (`TranslatorModule.translate_with_beam`), not every size up to it as the
    export's `translate` signature does."""
    import savedmodels.translator_search as translator_search

    traced = []

    def counting_translate(model, source_ids, config, **kwargs):
        traced.append(config.beam_size)
        return translate(model, source_ids, config, **kwargs)

    monkeypatch.setattr(translator_search, "translate", counting_translate)
    from_run = Translator.from_run(str(tiny_run))
    first = from_run.translate(LINES)  # the recipe's beam, 2
    assert traced == [2]
    assert from_run.translate(LINES) == first
    from_run.translate(LINES, beam_size=1)
    from_run.translate(LINES, beam_size=2, alpha=0.0, max_extra_length=3)
    assert traced == [2, 1]


def test_a_longer_extra_length_than_an_earlier_calls_is_searched_whole(tiny_run):
    """A call may ask for more output than the calls before it: its search
    gets buffers that long (a module of its own), not the earlier calls'."""
    first = Translator.from_run(str(tiny_run))
    assert first.translate(LINES, max_extra_length=1) == Translator.from_run(
        str(tiny_run)
    ).translate(LINES, max_extra_length=1)
    # A module whose buffers reach 80 extra positions was made for it (the
    # first one's limit, 1, made the search refuse it in the graph).
    longer = first.translate(LINES, max_extra_length=80)
    assert longer == Translator.from_run(str(tiny_run)).translate(
        LINES, max_extra_length=80
    )
    limits = [m.max_extra_length_limit for m in first._search_fn.modules]
    assert limits == [1, 80]
    first.translate(LINES, max_extra_length=40)  # within the second's
    assert len(first._search_fn.modules) == 2


def test_n_best_lists_hold_scored_hypotheses_best_first(from_run):
    (hypotheses,) = from_run.translate_n_best(["Open the file."], 2)
    assert len(hypotheses) == 2
    (first, best), (_, second) = hypotheses
    assert best >= second and first == from_run.translate(["Open the file."])[0]
    assert from_run.translate_n_best([""], 2) == [[("", 0.0), ("", 0.0)]]


@pytest.mark.parametrize(
    "texts, message",
    [
        ([], r"at least one string. Received: texts=\[\]"),
        ("Open the file.", "not one string. Received: texts='Open the file.'"),
        (["a", 3], r"item 1 is a int. Received: texts\[1\]=3"),
        (None, "a list of strings. Received: texts=None"),
    ],
)
def test_bad_texts_are_refused_naming_them(from_run, texts, message):
    with pytest.raises(ValueError, match=message):
        from_run.translate(texts)


@pytest.mark.parametrize(
    "overrides, n_best, message",
    [
        ({"method": "sample"}, 1, "Received: method='sample'"),
        ({"temperature": 0.5}, 1, "Received: temperature=0.5"),
        ({"beam_size": 1}, 2, "Received: n_best=2"),
    ],
)
def test_bad_search_settings_are_refused_naming_them(
    from_run, overrides, n_best, message
):
    with pytest.raises(ValueError, match=message):
        from_run.translate_n_best(["a"], n_best, **overrides)


def test_bad_runs_and_exports_are_refused_naming_them(tiny_run, tmp_path):
    with pytest.raises(ValueError, match="not a run directory"):
        Translator.from_run(str(tmp_path))
    missing = str(tmp_path / "none.weights.h5")
    with pytest.raises(FileNotFoundError, match=f"No such weights file: {missing}"):
        Translator.from_run(str(tiny_run), weights=missing)
    with pytest.raises(FileNotFoundError, match="No exported SavedModel at"):
        Translator.from_export(str(tmp_path / "export" / "1"))
    with pytest.raises(ValueError, match="is a translation run, not a parsing run"):
        Parser.from_run(str(tiny_run))
    with pytest.raises(ValueError, match="Received: compute_dtype='float16'"):
        Translator.from_run(str(tiny_run), compute_dtype="float16")
