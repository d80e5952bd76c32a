import gzip
import re

import pytest

from pipelines.trees.tree import TreeSyntaxError, parse_tree
from pipelines.trees.tree_normalisation import normalise_tree, strip_function_tags
from pipelines.trees.treebank import (
    BUNDLED_TREEBANKS,
    TreebankError,
    TreebankReport,
    bundled_trees_path,
    format_sections,
    load_bundled_trees,
    parse_sections,
    read_tree_file,
    read_treebank,
    wsj_files,
)

# Section 02, file 01: LDC's layout, multi-line, `( (S` and `((S`, a trace
# leaving an empty subject, a trace leaving an empty SBAR, function tags,
# indices (`-1`, `=2`) and bracket tokens.
WSJ_0201 = """\
( (S\x20\x20
    (NP-SBJ-1 (NNP Pierre) (NNP Vinken) )
    (VP (MD will)
      (VP (VB join)
        (NP (DT the) (NN board) )
        (S
          (NP-SBJ (-NONE- *-1) )
          (VP (TO to)
            (VP (VB leave) )))
        (PP-CLR (IN as)
          (NP (DT a) (JJ nonexecutive) (NN director) ))
        (NP-TMP (NNP Nov.) (CD 29) )))
    (. .) ))
((S (NP-SBJ=2 (-LRB- -LRB-) (UH Yes) (-RRB- -RRB-))
  (VP (VBD said) (SBAR (-NONE- 0) (S (-NONE- *T*-1))))
  (. .)))
"""
WSJ_0201_NORMALISED = [
    "(TOP (S (NP (NNP Pierre) (NNP Vinken)) (VP (MD will) (VP (VB join) "
    "(NP (DT the) (NN board)) (S (VP (TO to) (VP (VB leave)))) "
    "(PP (IN as) (NP (DT a) (JJ nonexecutive) (NN director))) "
    "(NP (NNP Nov.) (CD 29)))) (. .)))",
    "(TOP (S (NP (-LRB- -LRB-) (UH Yes) (-RRB- -RRB-)) (VP (VBD said)) (. .)))",
]
# Section 02, file 02: one tree normalisation leaves as it is, one of
# traces only (filtered).
WSJ_0202 = """\
( (S (NP (PRP It)) (VP (VBD rained)) (. .)) )

( (S (-NONE- *U*)) )
"""
WSJ_2200 = "( (FRAG (NP (NN Section) (CD 22)) (. .)) )\n"
# Section 23 is malformed: reading other splits never opens it.
WSJ_2301 = "( (S\n  (NP (NN broken)\n  (. .)) )\n"


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def ldc(tmp_path):
    """A fake LDC Treebank-3 tree: `parsed/mrg/wsj/SS/wsj_SSNN.mrg`, with
    files of other kinds beside it."""
    root = tmp_path / "treebank_3"
    wsj = root / "parsed" / "mrg" / "wsj"
    write(wsj / "02" / "wsj_0201.mrg", WSJ_0201)
    write(wsj / "02" / "wsj_0202.mrg", WSJ_0202)
    write(wsj / "22" / "wsj_2200.mrg", WSJ_2200)
    write(wsj / "23" / "wsj_2301.mrg", WSJ_2301)
    write(root / "tagged" / "pos" / "wsj" / "02" / "wsj_0201.pos", "not trees")
    write(root / "README", "not trees")
    return root


def test_train_split_of_ldc_layout(ldc):
    trees, report = read_treebank(ldc, split="train")
    assert [str(t) for t in trees] == WSJ_0201_NORMALISED + [
        "(TOP (S (NP (PRP It)) (VP (VBD rained)) (. .)))"
    ]
    assert report == TreebankReport(
        source=f"WSJ train (sections 02 found of 02-21) in {ldc}",
        files=2,
        read=4,
        normalised=2,
        filtered=1,
    )
    assert report.kept == len(trees) == 3
    assert str(report) == (
        f"WSJ train (sections 02 found of 02-21) in {ldc}: 4 trees read from "
        "2 files, 2 normalised, 1 filtered (empty after trace removal), 3 kept"
    )


def test_dev_split_and_sections(ldc):
    trees, report = read_treebank(ldc, split="dev")
    assert [str(t) for t in trees] == ["(TOP (FRAG (NP (NN Section) (CD 22)) (. .)))"]
    assert (report.files, report.read, report.normalised) == (1, 1, 0)
    assert str(report).startswith(f"WSJ dev (sections 22) in {ldc}: 1 trees")
    for sections in ("02,22", ["02", 22], "00-22"):
        trees, report = read_treebank(ldc, sections=sections)
        assert (report.files, len(trees)) == (3, 4)
    # sections win over the split's own.
    _, report = read_treebank(ldc, split="train", sections="22")
    assert report.source == f"WSJ train (sections 22) in {ldc}"


def test_flat_folder_and_layouts_agree(ldc, tmp_path):
    flat = tmp_path / "flat"
    write(flat / "wsj_0201.mrg", WSJ_0201)
    write(flat / "WSJ_0202.MRG", WSJ_0202)
    write(flat / "wsj_2200.mrg", WSJ_2200)
    assert read_treebank(flat, split="train")[0] == read_treebank(ldc, "train")[0]
    assert [p.name for p in wsj_files(flat, parse_sections("00-24"))] == [
        "wsj_0201.mrg",
        "WSJ_0202.MRG",
        "wsj_2200.mrg",
    ]


def test_other_files_are_read_whole(tmp_path):
    one_per_line = write(
        tmp_path / "trees.txt",
        "(S (NP-SBJ (NN x)) (VP (VBD y)))\n(NP (NN z))\n",
    )
    rooted = write(
        tmp_path / "rooted.ptb",
        "(ROOT\n  (S (NP-SBJ (NN a))\n    (VP (VBD b))))\n\n(ROOT (NP (NN c)))\n",
    )
    gzipped = tmp_path / "more.ptb.gz"
    with gzip.open(gzipped, "wt", encoding="utf-8") as file:
        file.write("(TOP (NP (NN d)))\n")
    trees, report = read_treebank([one_per_line, rooted, gzipped])
    assert [str(t) for t in trees] == [
        "(TOP (S (NP (NN x)) (VP (VBD y))))",
        "(TOP (NP (NN z)))",
        "(TOP (S (NP (NN a)) (VP (VBD b))))",
        "(TOP (NP (NN c)))",
        "(TOP (NP (NN d)))",
    ]
    assert (report.files, report.read, report.normalised, report.filtered) == (
        3,
        5,
        2,
        0,
    )
    assert report.source == f"{one_per_line}, {rooted}, {gzipped}"
    # A file of any name, a WSJ one included, is read whole.
    assert len(read_treebank(str(one_per_line))[0]) == 2


@pytest.mark.parametrize(
    "label, stripped",
    [
        ("NP-SBJ-1", "NP"),
        ("NP=2", "NP"),
        ("PP-LOC=3", "PP"),
        ("S-NOM-SBJ", "S"),
        ("NP", "NP"),
        ("PRP$", "PRP$"),
        ("-NONE-", "-NONE-"),
        ("-LRB-", "-LRB-"),
        ("-RRB-", "-RRB-"),
    ],
)
def test_strip_function_tags(label, stripped):
    assert strip_function_tags(label) == stripped


def test_normalise_tree():
    assert str(normalise_tree(parse_tree("(S (NN x))"))) == "(TOP (S (NN x)))"
    assert str(normalise_tree(parse_tree("( (S (NN x)) (. .))"))) == (
        "(TOP (S (NN x)) (. .))"
    )
    assert normalise_tree(parse_tree("( (S (NP (-NONE- *)) (-NONE- *T*)))")) is None
    once = normalise_tree(parse_tree(WSJ_0201.split("((S")[0]))
    assert normalise_tree(once) == once


@pytest.mark.parametrize(
    "sections, expected",
    [
        ("02-21", tuple(range(2, 22))),
        ("22", (22,)),
        (23, (23,)),
        ("00-01,24", (0, 1, 24)),
        (["02-03", "3", 24], (2, 3, 24)),
        ("0-24", tuple(range(25))),
    ],
)
def test_parse_sections(sections, expected):
    assert parse_sections(sections) == expected
    assert parse_sections(format_sections(expected)) == expected


@pytest.mark.parametrize("sections", ["25", "02-25", "21-02", "two", "", [], -1, True])
def test_invalid_sections_name_the_value(sections, ldc):
    with pytest.raises(ValueError, match=re.escape(f"sections={sections!r}")):
        read_treebank(ldc, sections=sections)


def test_format_sections():
    assert format_sections([22, 2, 3, 4, 0]) == "00,02-04,22"


def test_malformed_file_names_file_and_line(ldc):
    path = ldc / "parsed" / "mrg" / "wsj" / "23" / "wsj_2301.mrg"
    with pytest.raises(
        TreeSyntaxError, match=re.escape(f"in {path}: the tree opened at line 1")
    ):
        read_treebank(ldc, split="test")
    leaf = write(ldc / "leaf.mrg", "( (S (NN x))\n  (NP word (NN y)) )\n")
    with pytest.raises(TreeSyntaxError, match=re.escape(f"in {leaf} at line 2")):
        read_treebank(leaf)
    extra = write(ldc / "extra.mrg", "( (S (NN x)) )\n\n(NN y)))\n")
    with pytest.raises(TreeSyntaxError, match=re.escape(f"')' in {extra} at line 3")):
        read_treebank(extra)


def test_missing_and_empty_treebanks(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(TreebankError, match=re.escape(f"at {missing}")):
        read_treebank(missing, split="train")
    with pytest.raises(TreebankError, match=re.escape(f"at {missing}")):
        read_treebank([missing])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(
        TreebankError, match=re.escape(f"No WSJ files (wsj_SSNN.mrg) in {empty}")
    ):
        read_treebank(empty, split="train")
    write(empty / "notes.txt", "no trees here")
    with pytest.raises(TreebankError, match="No WSJ files"):
        read_treebank(empty, split="train")
    blank = write(tmp_path / "blank.mrg", "\n\n")
    with pytest.raises(TreebankError, match=re.escape(f"No trees in {blank}")):
        read_treebank(blank)
    with pytest.raises(ValueError, match="paths=\\[\\]"):
        read_treebank([])


def test_sections_absent_from_the_directory(ldc):
    with pytest.raises(
        TreebankError, match="sections 24 in .* holds sections 02,22-23"
    ):
        read_treebank(ldc, sections="24")


def test_selection_rules(ldc, tmp_path):
    with pytest.raises(ValueError, match="needs split= .* or sections="):
        read_treebank(ldc)
    with pytest.raises(ValueError, match="split='valid'"):
        read_treebank(ldc, split="valid")
    trees_file = write(tmp_path / "trees.txt", "(S (NN x))\n")
    with pytest.raises(ValueError, match="no directory in paths"):
        read_treebank(trees_file, split="train")


def test_duplicates_are_refused(ldc, tmp_path):
    path = ldc / "parsed" / "mrg" / "wsj" / "22" / "wsj_2200.mrg"
    with pytest.raises(TreebankError, match="given twice"):
        read_treebank([path, path])
    write(ldc / "copy" / "wsj_2200.mrg", WSJ_2200)
    with pytest.raises(TreebankError, match="Two WSJ files named wsj_2200.mrg"):
        read_treebank(ldc, split="dev")


def test_invalid_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "latin1.mrg"
    path.write_bytes(b"( (S (NN x)) )\n( (S (NN caf\xe9)) )\n")
    with pytest.raises(TreebankError, match=re.escape(f"UTF-8 in {path} at line 2")):
        read_treebank(path)


def test_read_tree_file_keeps_trees_as_read(ldc):
    path = ldc / "parsed" / "mrg" / "wsj" / "02" / "wsj_0201.mrg"
    read = list(read_tree_file(path))
    assert [line for line, _ in read] == [1, 14]
    assert read[0][1].label == "" and read[0][1].children[0].label == "S"


# The bundled GUM trees.
GUM_SPLITS = {"train": 3707, "dev": 438, "test": 491}


@pytest.fixture(scope="module")
def gum():
    return {split: load_bundled_trees(split) for split in GUM_SPLITS}


def test_gum_loads_every_tree(gum):
    for split, count in GUM_SPLITS.items():
        trees, report = gum[split]
        assert len(trees) == report.read == report.kept == count
        assert report.files == 1 and report.filtered == 0
        assert 0 < report.normalised <= count
        assert report.source == f"GUM {split} (bundled)"
    assert sum(len(trees) for trees, _ in gum.values()) == 4636


def test_gum_trees_are_normalised_and_round_trip(gum):
    for split, (trees, _) in gum.items():
        raw = [tree for _, tree in read_tree_file(bundled_trees_path(split))]
        for tree, original in zip(trees, raw, strict=True):
            assert tree.label == "TOP" and original.label == "ROOT"
            assert tree.words() == original.words()  # GUM has no traces
            assert parse_tree(str(tree)) == tree
            assert parse_tree(str(original)) == original
            assert normalise_tree(tree) == tree
        labels = {t.label for tree in trees for t in _constituents(tree)}
        tagged = [
            label
            for label in labels
            if not label.startswith("-") and re.search("[-=]", label)
        ]
        assert not tagged
        assert "-LRB-" in labels and "HYPH" in labels


def _constituents(tree):
    yield tree
    if not tree.is_preterminal:
        for child in tree.children:
            yield from _constituents(child)


def test_gum_files_carry_licence_and_readme():
    folder = bundled_trees_path("dev").parent
    for name in ("LICENSE-GUM.txt", "README.md", "documents.txt"):
        assert (folder / name).is_file()
    assert "silver trees" in (folder / "README.md").read_text("utf-8").lower()
    for split in BUNDLED_TREEBANKS["gum"]:
        assert bundled_trees_path(split).is_file()


@pytest.mark.parametrize(
    "kwargs, message",
    [({"split": "valid"}, "split='valid'"), ({"corpus": "wsj"}, "corpus='wsj'")],
)
def test_unknown_bundled_names(kwargs, message):
    with pytest.raises(ValueError, match=message):
        load_bundled_trees(**kwargs)
