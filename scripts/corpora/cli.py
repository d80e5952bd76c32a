"""The command line: ``python3 scripts/build_corpora.py [--out DIR] [--debs DIR] ...``.

What belongs here: argument parsing and the order of the steps (fetch,
extract, split, write, report).  The steps themselves live in the other
modules of ``scripts.corpora``.
"""

from __future__ import annotations

import argparse
import collections
import random
import shutil
import sys
import tempfile
from pathlib import Path

from .config import (
    DEFAULT_OUT,
    DING_DEV_BUCKETS,
    DING_PKG,
    DING_TEST_BUCKETS,
    LO_DEV_BUCKETS,
    LO_PKGS,
    LO_TEST_BUCKETS,
    SPLITS,
)
from .dictionary import extract_ding
from .fetch import fetch_packages
from .help_html import extract_libreoffice
from .notices import ding_version, write_ding_notice, write_lo_notice, write_readme
from .split import assign_splits, dedup_splits, pick_fixture, select_phrases
from .text import check_field, write_tsv, write_tsv_gz

DESCRIPTION = (
    "Rebuild the bundled parallel corpora under ``pipelines/data/`` from Debian "
    "packages."
)


def show_samples(name: str, pairs: list[tuple[str, str]], n: int) -> None:
    """Print `n` pairs of `pairs`, drawn with a generator seeded by `name`."""
    if n <= 0 or not pairs:
        return
    rng = random.Random(name)
    print(f"\n--- {n} random pairs of {name} ---")
    for s, t in rng.sample(pairs, min(n, len(pairs))):
        print(f"  EN: {s}\n  XX: {t}")


def build_parser() -> argparse.ArgumentParser:
    """Return the command-line parser."""
    ap = argparse.ArgumentParser(description=DESCRIPTION)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    ap.add_argument("--debs", type=Path, help="use the .deb files in this folder")
    ap.add_argument(
        "--apt-update", action="store_true", help="run apt-get update first"
    )
    ap.add_argument(
        "--show", type=int, default=0, metavar="N", help="print N random pairs a file"
    )
    ap.add_argument("--keep-work", action="store_true", help="keep the temp folder")
    return ap


def main(argv: list[str] | None = None) -> int:
    """Run the build.

    Args:
        argv: the command-line arguments (default: ``sys.argv[1:]``).

    Returns:
        The exit status, 0.
    """
    args = build_parser().parse_args(argv)

    stats: collections.Counter = collections.Counter()
    work = Path(tempfile.mkdtemp(prefix="build_corpora."))
    try:
        packages = fetch_packages(work, args.debs, args.apt_update)

        # LibreOffice help.
        lo = extract_libreoffice(packages, stats)
        lo_splits = {
            f"en-{lang}": assign_splits(
                items, "libreoffice-help", LO_TEST_BUCKETS, LO_DEV_BUCKETS
            )
            for lang, items in lo.items()
        }
        lo_final = dedup_splits(lo_splits, stats, "lo", pool_english=True)

        # Ding.
        sentences, phrases, ding_header = extract_ding(packages, stats)
        ding_splits = assign_splits(
            sentences, "ding", DING_TEST_BUCKETS, DING_DEV_BUCKETS
        )
        ding_final = dedup_splits({"en-de": ding_splits}, stats, "ding", False)["en-de"]
        phrase_pairs = select_phrases(
            phrases, ding_final, stats, "ding", DING_TEST_BUCKETS, DING_DEV_BUCKETS
        )

        # Write.
        out: Path = args.out
        for sub in ("ding", "libreoffice_help", "fixture"):
            if (out / sub).exists():
                shutil.rmtree(out / sub)
            (out / sub).mkdir(parents=True)
        files: dict[str, list[tuple[str, str]]] = {}
        for name, splits in lo_final.items():
            for split in SPLITS:
                files[f"libreoffice_help/{name}.{split}.tsv.gz"] = splits[split]
        for split in SPLITS:
            files[f"ding/en-de.{split}.tsv.gz"] = ding_final[split]
        files["ding/en-de.phrases.tsv.gz"] = phrase_pairs
        files["fixture/en-de.tsv"] = pick_fixture(lo_final["en-de"]["train"])

        counts, sizes = {}, {}
        for rel, pairs in sorted(files.items()):
            for s, t in pairs:
                check_field(s)
                check_field(t)
            path = out / rel
            if rel.endswith(".gz"):
                write_tsv_gz(path, pairs)
            else:
                write_tsv(path, pairs)
            counts[rel] = len(pairs)
            sizes[rel] = path.stat().st_size

        lo_pkgs = [packages[p] for p in LO_PKGS.values()]
        write_lo_notice(out / "libreoffice_help", lo_pkgs)
        write_lo_notice(out / "fixture", lo_pkgs, fixture=True)
        write_ding_notice(out / "ding", packages[DING_PKG], ding_header)
        write_readme(out, packages, counts, sizes, ding_version(ding_header))

        print("\n=== extraction statistics ===")
        for key in sorted(stats):
            print(f"{stats[key]:>9,}  {key}")
        print("\n=== output ===")
        for rel in sorted(counts):
            print(f"{counts[rel]:>9,} pairs  {sizes[rel]:>10,} bytes  {rel}")
        print(f"total {sum(sizes.values()):,} bytes")
        for rel, pairs in sorted(files.items()):
            show_samples(rel, pairs, args.show)
    finally:
        if args.keep_work:
            print(f"work folder kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0
