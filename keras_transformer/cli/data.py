"""A recipe's data: parallel text splits and the tokenizer that goes with them."""

import os

import keras

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


def train_tokenizer(recipe, pairs):
    """Trains the recipe's shared subword vocabulary on `pairs` (§5.1)."""
    texts = pipelines.sample_texts(
        pairs, max_pairs=recipe.tokenizer_sample_pairs, seed=recipe.seed
    )
    kind = {
        "sentencepiece": pipelines.SentencePieceTokenizer,
        "wordpiece": pipelines.WordPieceTokenizer,
    }[recipe.tokenizer]
    try:
        return kind.train(texts, vocab_size=recipe.vocab_size)
    except RuntimeError as error:  # SentencePiece's trainer reports bad settings so
        raise UserError(f"Tokenizer training failed: {error}") from None


def load_run_tokenizer(run, seed):
    """Seeds Keras, then loads the run's tokenizer.

    The order matters: with tensorflow-text 2.21 setting a seed frees the
    resources of SentencePiece tokenizers that already exist.
    """
    keras.utils.set_random_seed(seed)
    if not os.path.exists(run.tokenizer_path):
        raise UserError(
            f"No tokenizer at {run.tokenizer_path}; run `keras-transformer prepare` "
            "first."
        )
    return pipelines.load_tokenizer(run.tokenizer_path)


def source_ids_fn(tokenizer):
    """`fn(str) -> list of int`: source ids with eos, as the pipeline makes them."""

    def tokenize(text):
        return tokenizer.tokenize([text]).to_list()[0] + [pipelines.EOS_ID]

    return tokenize


def detokenize_fn(tokenizer):
    """`fn(list of int) -> str`."""

    def detokenize(ids):
        return tokenizer.detokenize([ids]).numpy()[0].decode("utf-8")

    return detokenize
