"""Reading a recipe's data: the parallel text of its splits (the first step of
`prepare`; evaluation and the demo read their held-out splits here too).

Every data source is read as a stream of pairs with one interface
(`pipelines.ParallelCorpus`, `pipelines.DatasetCorpus`): the user's files,
the bundled TSV files, a TFDS split. Training data is cleaned as the recipe's
`on_bad_line` says (`training_pairs`); held-out data is read whole, empty
lines included, and must be valid UTF-8 (`read_texts`), since dropping a line
would change the test set.
"""

import os

import pipelines
from keras_transformer.runs.user_error import UserError


def split_trees(recipe, split):
    """`(trees, pipelines.TreebankReport)` of one split of a parsing recipe
    (§6.3): the bundled GUM trees, the WSJ sections of `treebank_dir`, or
    tree files, normalised."""
    try:
        if recipe.data_source == "bundled":
            return pipelines.load_bundled_trees(split, corpus=recipe.dataset)
        if recipe.data_source == "files":
            paths = [path for part in recipe.split_files(split) for path in part]
            return pipelines.read_treebank(paths)
        if recipe.treebank_dir is None:
            raise UserError(
                f"Recipe {recipe.name} reads the WSJ of a Penn Treebank: give "
                "--treebank-dir (the LDC99T42 folder, or any folder of "
                "wsj_SSNN.mrg files)."
            )
        names = {
            recipe.train_split: recipe.train_sections,
            recipe.dev_split: recipe.dev_sections,
            recipe.test_split: recipe.test_sections,
        }
        if split not in names:
            raise ValueError(
                f"Unknown split; expected one of {sorted(names)}. Received: "
                f"split={split!r}"
            )
        paths = [recipe.treebank_dir]
        if split == recipe.train_split:  # extra training trees (semi-supervised)
            paths += [path for part in recipe.train_files for path in part]
            if recipe.preset == "parsing_semi_supervised" and len(paths) == 1:
                raise UserError(
                    f"Recipe {recipe.name} trains on the WSJ plus your own extra "
                    "trees: give --extra-trees FILE (repeatable)."
                )
        return pipelines.read_treebank(paths, sections=names[split])
    except (OSError, ValueError) as error:
        raise UserError(str(error)) from None


def corpus(recipe, split):
    """The corpus of one split of `recipe`'s data, read as a stream."""
    if recipe.task == "parsing":
        trees, report = split_trees(recipe, split)
        data = pipelines.TreeCorpus(trees, report.source, tags=recipe.tree_tags)
        data.report = report
        return data
    if recipe.data_source in ("files", "none"):
        try:
            parts = recipe.split_files(split)
        except ValueError as error:
            raise UserError(str(error)) from None
        return pipelines.ParallelCorpus(
            pipelines.CorpusPart.from_paths(part) for part in parts
        )
    if recipe.data_source == "bundled":
        languages = {recipe.source_language, recipe.target_language}
        if "en" not in languages or len(languages) != 2:
            raise UserError(
                "Bundled corpora pair English with one other language. Received: "
                f"source_language={recipe.source_language!r}, "
                f"target_language={recipe.target_language!r}"
            )
        (other,) = languages - {"en"}
        try:
            path = pipelines.bundled_corpus_path(recipe.dataset, f"en-{other}", split)
        except ValueError as error:
            raise UserError(str(error)) from None
        part = pipelines.CorpusPart(str(path), reverse=other == recipe.source_language)
        return pipelines.ParallelCorpus([part])
    pairs = pipelines.load_tfds(
        recipe.dataset,
        split,
        source_language=recipe.source_language,
        target_language=recipe.target_language,
        data_dir=os.environ.get("TFDS_DATA_DIR"),
    )
    return pipelines.DatasetCorpus(pairs, f"{recipe.dataset} {split}")


def training_pairs(recipe, corpus, counts=None):
    """`(source, target)` str pairs of a training corpus, cleaned as the
    recipe's `on_bad_line` says (skipped pairs counted in `counts`)."""
    pairs = pipelines.decode_pairs(
        corpus.raw_pairs(), corpus.origin, recipe.on_bad_line, counts
    )
    return ((source, target) for _, source, target in pairs)


def read_texts(recipe, split, limit=None):
    """`(sources, references)` of a held-out split as lists of str (the first
    `limit`), every line kept.

    Raises:
        UserError: a line-count mismatch, or invalid UTF-8 (file and line
            named).
    """
    data = corpus(recipe, split)
    try:
        data.scan()
        pairs = pipelines.decode_pairs(
            data.raw_pairs(), data.origin, "fail", keep_empty=True
        )
        sources, references = [], []
        for _, source, target in pairs:
            if limit is not None and len(sources) == limit:
                break
            sources.append(source)
            references.append(target)
    except (OSError, ValueError) as error:
        raise UserError(str(error)) from None
    return sources, references
