"""Treebanks for English constituency parsing (paper §6.3): the Wall Street
Journal part of the Penn Treebank as LDC ships it, any Penn Treebank bracket
files, and the bundled GUM trees (`data/gum/`).

The paper trains on WSJ sections 02-21 (about 40K sentences), develops on
section 22 and reports F1 on section 23; `WSJ_SPLITS` holds that standard
split, and every split can be given as a section range instead. WSJ files are
found by name (`wsj_SSNN.mrg`, section SS) anywhere below a directory: LDC's
`parsed/mrg/wsj/SS/` tree or all files in one folder. Files are read one at a
time and only those of the sections asked for.

Every tree is normalised as the standard parsing pipelines do
(`normalise_tree`): `-NONE-` traces and the constituents they leave empty are
removed, function tags and indices are stripped (`NP-SBJ-1` -> `NP`, `NP=2`
-> `NP`; a label starting with '-', such as `-LRB-`, is kept whole) and the
root is labelled `TOP`. Nothing is dropped silently: `read_treebank` and
`load_bundled_trees` return a `TreebankReport` of trees read, normalised and
filtered beside the trees.

>>> trees, report = load_bundled_trees("dev")
>>> report.read, report.normalised, report.filtered
(438, 393, 0)
>>> str(trees[0])
'(TOP (NP (NN Introduction)))'
>>> trees, report = read_treebank("treebank_3", split="train")  # doctest: +SKIP
"""

import dataclasses
import gzip
import os
import pathlib
import re
from collections.abc import Iterable, Iterator, Sequence

from pipelines.trees.tree import Tree, read_trees
from pipelines.trees.tree_normalisation import normalise_root

# The standard split of §6.3 (and of the parsing literature): split -> sections.
WSJ_SPLITS = {"train": "02-21", "dev": "22", "test": "23"}
WSJ_SECTIONS = range(25)  # 00-24
WSJ_FILE_PATTERN = re.compile(r"wsj_(\d\d)(\d\d)\.mrg", re.IGNORECASE)

# Package data: installed next to this module (pyproject `package-data`).
TREE_DATA_DIR = pathlib.Path(__file__).resolve().parent.parent / "data"
# corpus -> splits of the bundled treebanks (`data/<corpus>/<split>.ptb.gz`).
BUNDLED_TREEBANKS = {"gum": ("train", "dev", "test")}

PathLike = str | os.PathLike


class TreebankError(ValueError):
    """A treebank that cannot be read: missing, empty, or not valid UTF-8
    (malformed brackets raise `pipelines.trees.tree.TreeSyntaxError`, also a
    `ValueError`). The message names the file or directory, and the line."""


@dataclasses.dataclass(frozen=True)
class TreebankReport:
    """What reading a treebank did to its trees.

    `read - filtered` trees are returned. The root relabelling to `TOP`, which
    every tree gets, does not count as normalising it.
    """

    # What was read: "WSJ train (sections 02-21) in DIR", "GUM dev (bundled)".
    source: str
    # Files read.
    files: int
    # Trees read from them.
    read: int
    # Trees changed by trace removal or function-tag stripping.
    normalised: int
    # Trees dropped: no word left after trace removal.
    filtered: int

    @property
    def kept(self) -> int:
        return self.read - self.filtered

    def __str__(self) -> str:
        files = f"{self.files:,} file" + ("" if self.files == 1 else "s")
        return (
            f"{self.source}: {self.read:,} trees read from {files}, "
            f"{self.normalised:,} normalised, {self.filtered:,} filtered "
            f"(empty after trace removal), {self.kept:,} kept"
        )


def parse_sections(sections: str | int | Iterable[str | int]) -> tuple[int, ...]:
    """Reads a WSJ section selection: `"02-21"`, `"22"`, `23`,
    `"00-01,24"` or a list of such items.

    Args:
        sections: str, int or list of them. Sections 00-24, single or as
            inclusive ranges `"SS-SS"`, comma-separated in a string.

    Returns:
        The sections as sorted, distinct ints.

    Raises:
        ValueError: an empty selection, a section outside 00-24, a reversed
            range or anything else, naming the value received.
    """
    items = [sections] if isinstance(sections, str | int) else list(sections)
    chosen = set()
    for item in items:
        parts = item.split(",") if isinstance(item, str) else [item]
        for part in parts:
            chosen.update(_section_range(part, sections))
    if not chosen:
        raise ValueError(
            f"Expected at least one WSJ section (00-24). Received: "
            f"sections={sections!r}"
        )
    return tuple(sorted(chosen))


def _section_range(part, sections):
    if isinstance(part, int) and not isinstance(part, bool):
        first = last = part
    else:
        match = re.fullmatch(r"\s*(\d{1,2})\s*(?:-\s*(\d{1,2})\s*)?", str(part))
        if not match:
            raise ValueError(
                "Expected WSJ sections as 'SS', 'SS-SS' or a list of them "
                f"(00-24). Received: sections={sections!r}"
            )
        first = int(match[1])
        last = int(match[2]) if match[2] else first
    if first not in WSJ_SECTIONS or last not in WSJ_SECTIONS or first > last:
        raise ValueError(
            "Expected WSJ sections within 00-24, ranges in increasing order. "
            f"Received: sections={sections!r}"
        )
    return range(first, last + 1)


def format_sections(sections: Iterable[int]) -> str:
    """`(0, 1, 2, 22)` -> `"00-02,22"`: the inverse of `parse_sections`."""
    runs = []
    for section in sorted(set(sections)):
        if runs and section == runs[-1][1] + 1:
            runs[-1][1] = section
        else:
            runs.append([section, section])
    return ",".join(
        f"{first:02d}" if first == last else f"{first:02d}-{last:02d}"
        for first, last in runs
    )


def wsj_files(directory: PathLike, sections: Iterable[int]) -> list[pathlib.Path]:
    """The WSJ files (`wsj_SSNN.mrg`) of `sections` anywhere below
    `directory`, in section and file order.

    Args:
        directory: path. LDC's treebank root, its `parsed/mrg/wsj/`, or any
            folder holding the files, nested or not.
        sections: ints. As returned by `parse_sections`.

    Returns:
        The paths, sorted by file name (section, then file number).

    Raises:
        TreebankError: `directory` is missing, holds no WSJ file, none of
            `sections`, or two files of one name.
    """
    directory = pathlib.Path(directory)
    if not directory.is_dir():
        raise TreebankError(f"No treebank directory at {directory}")
    found = {}
    for folder, _, names in os.walk(directory):
        for name in names:
            if not WSJ_FILE_PATTERN.fullmatch(name):
                continue
            path = pathlib.Path(folder) / name
            key = name.lower()
            if key in found:
                raise TreebankError(
                    f"Two WSJ files named {name} in {directory}: {found[key]} "
                    f"and {path}"
                )
            found[key] = path
    if not found:
        raise TreebankError(
            f"No WSJ files (wsj_SSNN.mrg) in {directory} or its subfolders"
        )
    wanted = set(sections)
    chosen = [
        found[key]
        for key in sorted(found)
        if int(WSJ_FILE_PATTERN.fullmatch(key)[1]) in wanted
    ]
    if not chosen:
        present = {int(WSJ_FILE_PATTERN.fullmatch(key)[1]) for key in found}
        raise TreebankError(
            f"No WSJ files of sections {format_sections(wanted)} in {directory} "
            f"(it holds sections {format_sections(present)})"
        )
    return chosen


def read_tree_file(path: PathLike) -> Iterator[tuple[int, Tree]]:
    """Yields `(line, tree)` for each tree of one bracket file, as read
    (not normalised).

    Any layout `pipelines.trees.tree.read_trees` reads: LDC's multi-line `.mrg`
    trees, one tree per line, blank lines between trees or not. A name ending
    in `.gz` is read through gzip.

    Args:
        path: path. A UTF-8 (or ASCII) bracket file, plain or gzipped.

    Raises:
        TreebankError: the file is missing, not UTF-8 or holds no tree,
            naming it (and the line).
        pipelines.trees.tree.TreeSyntaxError: malformed brackets, naming the file
            and line.
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise TreebankError(f"No treebank file at {path}")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as file:
        data = file.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise TreebankError(f"Invalid UTF-8 in {path} at line {line}") from None
    empty = True
    for line, tree in read_trees(text, source=str(path)):
        empty = False
        yield line, tree
    if empty:
        raise TreebankError(f"No trees in {path}")


def read_treebank(
    paths: PathLike | Sequence[PathLike],
    split: str | None = None,
    sections: str | int | Iterable[str | int] | None = None,
) -> tuple[list[Tree], TreebankReport]:
    """Reads and normalises a treebank: WSJ directories and bracket files.

    A directory contributes its WSJ files (`wsj_SSNN.mrg`, found by name at
    any depth) of the sections selected by `split` or `sections`; a file is
    read whole, whatever its name: LDC `.mrg`, one tree per line, or trees
    separated by blank lines, plain or gzipped. Trees are normalised with
    `normalise_tree`; those left without words are filtered and counted.

    Args:
        paths: path or list of paths. Directories and files, read in order.
        split: str. `"train"`, `"dev"` or `"test"`: WSJ sections 02-21, 22
            and 23 (`WSJ_SPLITS`, the split of §6.3). Defaults to `None`.
        sections: str, int or list. Sections instead of the split's
            (`parse_sections`: `"02-21"`, `"22"`, `["00", "24"]`). Defaults
            to `None`.

    Returns:
        `(trees, report)`: the normalised `Tree`s in file order, and a
        `TreebankReport` of trees read, normalised and filtered.

    Raises:
        ValueError: an unknown split, invalid sections, a directory without a
            split or sections, or a split or sections without any directory.
        TreebankError: a missing file or directory, a directory without WSJ
            files of the sections, an empty or undecodable file.
        pipelines.trees.tree.TreeSyntaxError: malformed brackets, naming the file
            and line.
    """
    paths = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    if not paths:
        raise ValueError("Expected at least one treebank path. Received: paths=[]")
    if split is not None and split not in WSJ_SPLITS:
        raise ValueError(
            f"Expected a WSJ split among {list(WSJ_SPLITS)}. Received: split={split!r}"
        )
    for path in paths:
        if not pathlib.Path(path).exists():
            raise TreebankError(f"No treebank file or directory at {path}")
    chosen = None
    if sections is not None:
        chosen = parse_sections(sections)
    elif split is not None:
        chosen = parse_sections(WSJ_SPLITS[split])
    directories = [p for p in paths if pathlib.Path(p).is_dir()]
    if chosen is not None and not directories:
        raise ValueError(
            "split and sections select the WSJ files of a directory; files are "
            f"read whole. Received: split={split!r}, sections={sections!r} and "
            f"no directory in paths={[str(p) for p in paths]}"
        )
    files = []
    for path in paths:
        if pathlib.Path(path).is_dir():
            if chosen is None:
                raise ValueError(
                    f"Reading the WSJ files of directory {path} needs split= "
                    "('train', 'dev', 'test': sections 02-21, 22, 23) or "
                    "sections=. Received: split=None, sections=None"
                )
            files.extend(wsj_files(path, chosen))
        else:
            files.append(pathlib.Path(path))
    seen = set()
    for path in files:
        if path.resolve() in seen:
            raise TreebankError(f"Treebank file {path} is given twice")
        seen.add(path.resolve())
    return _read_files(files, _describe(paths, files, split, chosen))


def _describe(paths, files, split, chosen):
    """The `source` of the report: which split, sections and paths."""
    where = ", ".join(str(p) for p in paths)
    if chosen is None:
        return where
    found = {
        int(match[1])
        for match in (WSJ_FILE_PATTERN.fullmatch(f.name) for f in files)
        if match
    }
    asked = format_sections(chosen)
    sections = f"sections {format_sections(found & set(chosen))}"
    if found & set(chosen) != set(chosen):
        sections += f" found of {asked}"
    name = f"WSJ {split}" if split is not None else "WSJ"
    return f"{name} ({sections}) in {where}"


def _read_files(files, source):
    trees, read, normalised, filtered = [], 0, 0, 0
    for path in files:
        for _, tree in read_tree_file(path):
            read += 1
            result, changed = normalise_root(tree)
            if result is None:
                filtered += 1
                continue
            normalised += changed
            trees.append(result)
    report = TreebankReport(
        source=source,
        files=len(files),
        read=read,
        normalised=normalised,
        filtered=filtered,
    )
    return trees, report


def bundled_trees_path(split: str = "train", corpus: str = "gum") -> pathlib.Path:
    """Returns the path of one bundled tree file (`data/gum/<split>.ptb.gz`).

    Args:
        split: str. `"train"`, `"dev"` or `"test"`. Defaults to `"train"`.
        corpus: str. One of `BUNDLED_TREEBANKS`. Defaults to `"gum"`.

    Returns:
        A `pathlib.Path` under the package's `data/` folder.
    """
    if corpus not in BUNDLED_TREEBANKS:
        raise ValueError(
            f"Unknown bundled treebank; expected one of "
            f"{sorted(BUNDLED_TREEBANKS)}. Received: corpus={corpus!r}"
        )
    if split not in BUNDLED_TREEBANKS[corpus]:
        raise ValueError(
            f"Bundled treebank {corpus!r} has splits "
            f"{list(BUNDLED_TREEBANKS[corpus])}. Received: split={split!r}"
        )
    return TREE_DATA_DIR / corpus / f"{split}.ptb.gz"


def load_bundled_trees(
    split: str = "train", corpus: str = "gum"
) -> tuple[list[Tree], TreebankReport]:
    """Reads a bundled treebank, normalised as `read_treebank` does.

    GUM (`data/gum/`, see its README): 4,636 English trees of the Creative
    Commons genres, train 3,707 / dev 438 / test 491. They are silver trees
    (parser output from gold part-of-speech tags), so F1 on them is not
    comparable with the paper's WSJ section 23 figures (§6.3, Table 4).

    Args:
        split: str. As in `bundled_trees_path`.
        corpus: str. As in `bundled_trees_path`.

    Returns:
        `(trees, report)` as `read_treebank` returns them.
    """
    path = bundled_trees_path(split, corpus)
    return _read_files([path], f"{corpus.upper()} {split} (bundled)")
