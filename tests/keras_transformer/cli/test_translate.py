"""`keras-transformer translate`: streaming, length-sorted batches, input order.

Stand-in translators (plain functions with the interface of `Translator.search`
returns) make the batching and ordering tests exact and fast; the last test
runs the command on the shared tiny run.
"""

import gzip
import io
import random

import pytest

from keras_transformer import cli
from keras_transformer.decoding.decoding_config import DecodingConfig
from keras_transformer.runs.user_error import UserError
from keras_transformer.translation.line_files import (
    check_output_path,
    count_lines,
    read_lines,
)
from keras_transformer.translation.line_streaming import (
    estimated_tokens,
    stream_file,
    stream_lines,
)


def fake_translator(calls):
    """Upper-cases each line; n-best i appends i stars; score -len - i. Keeps
    the texts of each call in `calls`."""

    def run(texts, decoding):
        n_best = decoding.n_best
        calls.append(list(texts))
        translations = [[t.upper() + "*" * i for i in range(n_best)] for t in texts]
        scores = [[-len(t) - i for i in range(n_best)] for t in texts]
        return translations, scores

    return run


def reversing_translator(calls):
    """Reverses each line (a translation that depends on the line, so lines
    written in another order than the input's do not match)."""

    def run(texts, decoding):
        calls.append(list(texts))
        return [[t[::-1]] for t in texts], [[0.0] for _ in texts]

    return run


def random_lines(count, seed=0):
    """`count` distinct lines of 1 to 60 words, about one in eight empty."""
    rng = random.Random(seed)
    lines = []
    for i in range(count):
        if rng.random() < 0.125:
            lines.append("")
        else:
            words = [f"w{rng.randrange(1000)}" for _ in range(rng.randint(0, 59))]
            lines.append(" ".join([f"line{i}", *words]))
    return lines


def test_ten_thousand_lines_come_back_in_input_order(tmp_path):
    lines = random_lines(10_000)
    source, target = tmp_path / "big.txt", tmp_path / "out.txt"
    source.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    calls = []
    count = stream_file(reversing_translator(calls), str(source), str(target))
    assert count == 10_000
    written = target.read_text(encoding="utf-8").split("\n")
    assert written[-1] == "" and len(written) == 10_001
    assert written[:-1] == [line[::-1] for line in lines]
    sent = [text for call in calls for text in call]
    non_empty = [line for line in lines if line]
    assert "" not in sent and sorted(sent) == sorted(non_empty)
    assert sent != non_empty  # translated in another order than the input's


def test_batches_follow_the_token_budget_sorted_by_length():
    calls = []
    lines = ["a b c", "a", "a b", "", "a b c d e f g h", "a b"]
    stream_lines(fake_translator(calls), lines, io.StringIO(), batch_tokens=6)
    # Sorted by words (then input order); 3 lines x 2 words = 6 fit, 4 x 3 do
    # not; the 8-word line is over the budget and goes alone.
    assert calls == [["a", "a b", "a b"], ["a b c"], ["a b c d e f g h"]]


def test_batches_fill_the_budget_within_each_chunk():
    lines = random_lines(3_000, seed=1)
    index = {line: i for i, line in enumerate(lines)}
    calls, chunk_size, budget, batch_size = [], 500, 300, 40
    stream_lines(
        fake_translator(calls),
        lines,
        io.StringIO(),
        batch_size=batch_size,
        batch_tokens=budget,
        chunk_size=chunk_size,
    )
    batches = [
        [(estimated_tokens(text), index[text]) for text in call] for call in calls
    ]
    for batch, after in zip(batches, [*batches[1:], None], strict=True):
        longest = batch[-1][0]
        assert batch == sorted(batch)
        assert len(batch) <= batch_size
        assert len(batch) * longest <= budget or len(batch) == 1
        assert len({i // chunk_size for _, i in batch}) == 1
        if after and after[0][1] // chunk_size == batch[0][1] // chunk_size:
            # The next line of the same chunk did not fit in this batch.
            assert after[0] > batch[-1]
            full = len(batch) == batch_size
            assert full or (len(batch) + 1) * after[0][0] > budget
    assert sum(len(batch) for batch in batches) == sum(1 for line in lines if line)


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_failure_mid_way_leaves_the_lines_done_in_order(tmp_path):
    # Line i has (3 i mod 10) + 1 words, so a chunk of 10 is translated in the
    # order 0, 7 | 4, 1 | 8, 5 | 2, 9 | 6, 3 (two lines per batch).
    lines = [" ".join([f"l{i}"] * (3 * i % 10 + 1)) for i in range(50)]
    source, output = tmp_path / "in.txt", tmp_path / "out.txt"
    target = tmp_path / "out.txt.partial"  # renamed to out.txt when complete
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    calls, on_disk = [], []
    translate = fake_translator(calls)

    def failing(texts, decoding):
        if len(calls) == 12:  # the third batch of the third chunk
            on_disk.append(target.read_text(encoding="utf-8"))
            raise RuntimeError("out of memory")
        return translate(texts, decoding)

    progress = Terminal()
    with pytest.raises(RuntimeError, match="out of memory"):
        stream_file(
            failing,
            str(source),
            str(output),
            total=count_lines(str(source)),
            progress=progress,
            batch_size=2,
            chunk_size=10,
        )
    # Done: chunks 1 and 2, and lines 20, 27, 24, 21 of chunk 3; the first 22
    # lines are complete, on disk before the failure (flushed) and after it.
    expected = "".join(f"{line.upper()}\n" for line in lines[:22])
    assert on_disk == [expected]
    assert target.read_text(encoding="utf-8") == expected
    assert not output.exists()  # never a partial file under the final name
    # Progress counts the 24 lines done, and its line is ended for the error.
    last = progress.getvalue().rsplit("\r", 1)[-1]
    assert last.startswith("translated 24/50 lines") and last.endswith("\n")


def test_empty_lines_and_n_best_keep_the_input_index():
    calls, output = [], io.StringIO()
    decoding = DecodingConfig(beam_size=2, n_best=2)
    lines = ["bbbbb b\n", "\n", "  \n", "a"]  # 7 bytes: 2 estimated tokens
    count = stream_lines(fake_translator(calls), lines, output, decoding=decoding)
    assert count == 4 and calls == [["a", "bbbbb b"]]  # empty lines are not sent
    assert output.getvalue().splitlines() == [
        "0 ||| BBBBB B ||| -7.0000",
        "0 ||| BBBBB B* ||| -8.0000",
        "1 |||  ||| 0.0000",
        "1 |||  ||| 0.0000",
        "2 |||  ||| 0.0000",
        "2 |||  ||| 0.0000",
        "3 ||| A ||| -1.0000",
        "3 ||| A* ||| -2.0000",
    ]


def test_progress_goes_to_its_own_stream():
    output, log, terminal = io.StringIO(), io.StringIO(), Terminal()
    for progress in (log, terminal):
        stream_lines(
            fake_translator([]),
            ["a", "b"],
            output,
            batch_size=1,
            total=2,
            progress=progress,
        )
    assert "translated 2/2 lines [####################] 100%" in log.getvalue()
    assert "sentences/s" in log.getvalue() and "\r" not in log.getvalue()
    assert terminal.getvalue().count("\r") == 3  # drawn at 0, 1 and 2 lines
    assert terminal.getvalue().endswith("\n")
    assert output.getvalue() == "A\nB\n" * 2


def test_input_is_read_as_utf8_lines_from_files_gzip_and_stdin(tmp_path, monkeypatch):
    text = "\ufeffKlick auf OK.\r\n\nÜber\n"
    plain, packed = tmp_path / "in.txt", tmp_path / "in.txt.gz"
    plain.write_bytes(text.encode("utf-8"))
    packed.write_bytes(gzip.compress(text.encode("utf-8")))
    expected = ["Klick auf OK.", "", "Über"]
    assert list(read_lines(str(plain))) == expected
    assert list(read_lines(str(packed))) == expected
    assert count_lines(str(packed)) == 3 and count_lines("-") is None
    monkeypatch.setattr("sys.stdin", io.StringIO("one\ntwo\n"))
    assert list(read_lines("-")) == ["one", "two"]


def test_invalid_utf8_names_the_file_and_line(tmp_path, capsys):
    source = tmp_path / "bad.txt"
    source.write_bytes(b"fine\nalso fine\nbad \xff byte\n")
    with pytest.raises(UserError, match=r"Invalid UTF-8 in .*bad.txt at line 3$"):
        count_lines(str(source))
    # Refused before the (here missing) model is loaded: one line, status 2.
    argv = ["translate", "--export", str(tmp_path), "--input", str(source)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert f"Invalid UTF-8 in {source} at line 3" in err and "Traceback" not in err


def test_an_output_that_is_the_input_or_has_no_folder_is_refused(tmp_path, capsys):
    source = tmp_path / "in.txt"
    source.write_text("a\n")
    with pytest.raises(UserError, match="is the input file"):
        check_output_path(str(source), str(source))
    with pytest.raises(UserError, match="No such folder"):
        check_output_path(str(tmp_path / "missing" / "out.txt"))
    with pytest.raises(UserError, match="is a folder"):
        check_output_path(str(tmp_path))
    check_output_path(str(tmp_path / "out.txt"), str(source))
    check_output_path("-", str(source))
    argv = ["translate", "--export", str(tmp_path), "--input", str(source)]
    assert cli.main(argv + ["--output", str(source)]) == 2
    assert "is the input file" in capsys.readouterr().err
    assert source.read_text() == "a\n"  # not emptied


def test_a_batch_budget_of_zero_is_refused_where_parsed(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["translate", "--run-dir", "missing-run", "--batch-tokens", "0"])
    assert exit_info.value.code == 2
    assert "argument --batch-tokens: expected" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["batch_size", "batch_tokens", "chunk_size"])
def test_batching_arguments_are_checked(name):
    with pytest.raises(ValueError, match=f"Received: {name}=0"):
        stream_lines(fake_translator([]), ["a"], io.StringIO(), **{name: 0})


def test_more_hypotheses_than_beams_is_refused():
    # Refused where the options become a DecodingConfig (a ValueError is a
    # user error at the command line: one line, exit status 2).
    with pytest.raises(ValueError, match="n_best=5, beam_size=4"):
        DecodingConfig().with_overrides(n_best=5)


def test_translate_a_file_into_a_file_with_a_run(tiny_run, tmp_path, capsys):
    lines = ["Select a cell and click OK.", "", "Click OK.", "Open the file.", "OK"]
    source, target = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    argv = ["translate", "--run-dir", str(tiny_run), "--input", str(source)]
    argv += ["--output", str(target), "--beam-size", "2", "--n-best", "2"]
    assert cli.main(argv + ["--batch-tokens", "4"]) == 0  # several batches
    captured = capsys.readouterr()
    assert captured.out == ""  # translations in the file, progress on stderr
    assert "translated 5/5 lines" in captured.err
    rows = [row.split(" ||| ") for row in target.read_text().splitlines()]
    assert [row[0] for row in rows] == [str(i) for i in range(5) for _ in range(2)]
    assert rows[2:4] == [["1", "", "0.0000"]] * 2  # the empty line, in its place
    for first, second in zip(rows[::2], rows[1::2], strict=True):
        assert float(first[2]) >= float(second[2])
