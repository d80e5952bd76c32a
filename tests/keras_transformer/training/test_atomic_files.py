import os

from keras_transformer.training.atomic_files import atomic_write_json, read_json


def test_atomic_write_json_replaces_whole_and_leaves_no_partial_file(tmp_path):
    path = tmp_path / "state.json"
    atomic_write_json({"epoch": 1}, str(path))
    atomic_write_json({"epoch": 2, "step": 10}, str(path))
    assert read_json(str(path)) == {"epoch": 2, "step": 10}
    assert os.listdir(tmp_path) == ["state.json"]


class _FailingModel:
    """Writes half a file, then fails, as a kill or a full disk would."""

    weights = ()  # nothing to count: the free-space check passes

    def save_weights(self, path, overwrite=True):
        with open(path, "wb") as file:
            file.write(b"half")
        raise OSError(28, "No space left on device")


def test_a_failed_weights_write_keeps_the_previous_file_and_no_partial(tmp_path):
    import pytest

    from keras_transformer.training.atomic_files import atomic_save_weights

    path = tmp_path / "ckpt-00000005.weights.h5"
    path.write_bytes(b"previous")
    with pytest.raises(OSError, match="disk is full") as info:
        atomic_save_weights(_FailingModel(), str(path))
    assert info.value.filename == str(path)
    assert path.read_bytes() == b"previous" and os.listdir(tmp_path) == [path.name]


def test_an_evaluation_report_is_replaced_whole(tmp_path, monkeypatch):
    import pytest

    from keras_transformer.decoding import DecodingConfig
    from keras_transformer.runs.evaluation_files import write_evaluation

    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "test.txt").write_text("old\n")

    def interrupted(source, target):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_evaluation(
            str(tmp_path), "test", ["new"], {}, "w.weights.h5", DecodingConfig()
        )
    assert (tmp_path / "eval" / "test.txt").read_text() == "old\n"


def test_a_failed_translation_keeps_the_previous_output(tmp_path):
    import pytest

    from keras_transformer.translation.line_streaming import stream_file

    source, target = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("a\nb\nc\n")
    target.write_text("previous\n")
    calls = []

    def translator(texts, decoding):
        calls.append(texts)
        if len(calls) > 1:
            raise RuntimeError("stopped")
        return [[t.upper()] for t in texts], [[0.0] for _ in texts]

    with pytest.raises(RuntimeError):
        stream_file(translator, str(source), str(target), batch_size=1)
    assert target.read_text() == "previous\n"
    assert (tmp_path / "out.txt.partial").read_text() == "A\n"  # the lines done
    calls.clear()
    calls.append(None)  # now every call succeeds
    stream_file(
        lambda t, d: ([[x.upper()] for x in t], [[0.0]] * len(t)),
        str(source),
        str(target),
    )
    assert target.read_text() == "A\nB\nC\n"
    assert not (tmp_path / "out.txt.partial").exists()
