"""Reading a recipe's data: the parallel text of its splits (the first step of
`prepare`; evaluation and the demo read their splits here too)."""

import os

import pipelines
from keras_transformer.cli.user_error import UserError


def load_pairs(recipe, split):
    """The `(source, target)` string pairs of one split of `recipe`'s data."""
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
            return pipelines.load_bundled(
                recipe.dataset,
                f"en-{other}",
                split,
                reverse=other == recipe.source_language,
            )
        except ValueError as error:
            raise UserError(str(error)) from None
    return pipelines.load_tfds(
        recipe.dataset,
        split,
        source_language=recipe.source_language,
        target_language=recipe.target_language,
        data_dir=os.environ.get("TFDS_DATA_DIR"),
    )


def read_texts(recipe, split, limit=None):
    """`(sources, references)` of a split as lists of str (the first `limit`)."""
    pairs = load_pairs(recipe, split)
    if limit is not None:
        pairs = pairs.take(limit)
    sources, references = [], []
    for source, target in pairs.as_numpy_iterator():
        sources.append(source.decode("utf-8"))
        references.append(target.decode("utf-8"))
    return sources, references
