"""`keras-transformer parse` streams as `translate` does: length-sorted
batches within a budget of tree symbols, trees in input order, `(TOP )` for
an empty line, invalid UTF-8 replaced, a `.partial` file until the end.

A stand-in parser (a plain function with the interface of `Parser.search`
returns) makes these tests exact and fast; `test_parsing.py` runs the command
on a trained run.
"""

import pytest

from keras_transformer.decoding.decoding_config import DecodingConfig
from keras_transformer.parsing.parser import XLA_FROM_LINES, search_mode
from keras_transformer.parsing.tree_streaming import (
    EMPTY_TREE,
    parse_cost,
    stream_trees,
)
from keras_transformer.translation.line_files import count_lines
from tests.keras_transformer.cli.test_translate import Terminal, random_lines


def flat_parser(calls):
    """One flat tree over each sentence's words; keeps each call's texts."""

    def run(texts, decoding):
        calls.append(list(texts))
        trees = [[flat(text)] for text in texts]
        return trees, [[None]] * len(texts)

    return run


def flat(line):
    """`flat_parser`'s tree of a line; `(TOP )` for an empty one."""
    return (
        f"(TOP {' '.join(f'(XX {w})' for w in line.split())})" if line else EMPTY_TREE
    )


def test_ten_thousand_lines_are_parsed_in_input_order(tmp_path):
    lines = random_lines(10_000)
    source, target = tmp_path / "big.txt", tmp_path / "trees.txt"
    source.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    calls = []
    count = stream_trees(flat_parser(calls), str(source), str(target), DecodingConfig())
    assert count == 10_000
    assert target.read_text(encoding="utf-8").splitlines() == [flat(x) for x in lines]
    assert EMPTY_TREE == "(TOP )"
    rows = set()
    for call in calls:  # sorted by length, within the symbol budget
        costs = [parse_cost(text) for text in call]
        assert costs == sorted(costs) and len(call) <= 64
        assert len(call) * costs[-1] <= 4096 or len(call) == 1
        rows.add(len(call))
    assert rows <= {1, 2, 4, 8, 16, 32, 64} and 64 in rows  # few shapes
    sent = [text for call in calls for text in call]
    assert sorted(sent) == sorted(line for line in lines if line)


def test_parse_cost_is_the_constrained_tree_bound():
    # n words: n leaves and the brackets of up to n + 10 constituents.
    assert [parse_cost(t) for t in ["", "a", "a  b\tc"]] == [21, 24, 30]


def test_invalid_utf8_is_read_with_replacement(tmp_path):
    source, target = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_bytes(b"caf\xe9 au lait\n\xff\n")
    assert count_lines(str(source), errors="replace") == 2
    stream_trees(flat_parser([]), str(source), str(target), DecodingConfig())
    trees = target.read_text(encoding="utf-8").splitlines()
    assert trees == ["(TOP (XX caf\ufffd) (XX au) (XX lait))", "(TOP (XX \ufffd))"]


def test_a_killed_parse_leaves_the_finished_lines_and_no_final_file(tmp_path):
    lines = [" ".join([f"l{i}"] * (3 * i % 10 + 1)) for i in range(50)]
    source, output = tmp_path / "in.txt", tmp_path / "trees.txt"
    partial = tmp_path / "trees.txt.partial"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    calls = []
    parser = flat_parser(calls)

    def failing(texts, decoding):
        if len(calls) == 12:  # the third batch of the third chunk of ten
            raise KeyboardInterrupt
        return parser(texts, decoding)

    progress = Terminal()
    with pytest.raises(KeyboardInterrupt):
        stream_trees(
            failing,
            str(source),
            str(output),
            DecodingConfig(),
            total=50,
            progress=progress,
            batch_size=2,
            chunk_size=10,
        )
    # As translate's: chunks 1 and 2 and lines 20, 27, 24, 21 are done.
    expected = "".join(f"{flat(line)}\n" for line in lines[:22])
    assert partial.read_text(encoding="utf-8") == expected
    assert not output.exists()
    last = progress.getvalue().rsplit("\r", 1)[-1]
    assert last.startswith("parsed 24/50 lines") and "sentences/s" in last


class _Model:
    def __init__(self, compute_dtype):
        self.compute_dtype = compute_dtype


def test_auto_search_compiles_with_xla_only_for_long_float32_inputs():
    float32, bfloat16 = _Model("float32"), _Model("bfloat16")
    assert search_mode("auto", float32, None) == "xla"  # stdin: a stream
    assert search_mode("auto", float32, XLA_FROM_LINES + 1) == "xla"
    assert search_mode("auto", float32, XLA_FROM_LINES) == "graph"
    assert search_mode("auto", bfloat16, None) == "graph"
    assert search_mode("graph", float32, None) == "graph"
    with pytest.raises(ValueError, match="search"):
        search_mode("fast", float32, None)
