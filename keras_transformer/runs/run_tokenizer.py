"""A run's tokenizer: trained on the recipe's data once (the second step of
`prepare`), then loaded by every later subcommand."""

import os

import keras

import pipelines
from keras_transformer.runs.user_error import UserError
from keras_transformer.training.corrupt_file_error import CorruptFileError


def train_tokenizer(recipe, pairs):
    """Trains the recipe's shared subword vocabulary (§5.1) on a seeded sample
    of `recipe.tokenizer_sample_pairs` of `pairs` (an iterable of str pairs,
    drawn in one streaming pass)."""
    texts = pipelines.sample_texts(
        pairs, max_pairs=recipe.tokenizer_sample_pairs, seed=recipe.seed
    )
    kind = pipelines.tokenizer_class(recipe.tokenizer)
    try:
        return kind.train(texts, vocab_size=recipe.vocab_size)
    except RuntimeError as error:  # SentencePiece's trainer reports bad settings so
        raise UserError(f"Tokenizer training failed: {error}") from None


def load_run_tokenizer(run, seed=None):
    """Seeds Keras (unless `seed` is `None`), then loads the run's tokenizer.

    The order matters: with tensorflow-text 2.21 setting a seed frees the
    resources of SentencePiece tokenizers that already exist (TensorFlow's
    eager kernel cache is cleared), so a tokenizer loaded before the seed
    fails when next used.
    """
    if seed is not None:
        keras.utils.set_random_seed(seed)
    if not os.path.exists(run.tokenizer_path):
        raise UserError(
            f"No tokenizer at {run.tokenizer_path}; run `keras-transformer prepare` "
            "first."
        )
    try:
        return pipelines.load_tokenizer(run.tokenizer_path)
    except Exception as error:  # sentencepiece and TF raise many kinds
        raise CorruptFileError(
            run.tokenizer_path,
            "a tokenizer model",
            " ".join(str(error).split())[:200] or type(error).__name__,
            "restore it, or use a new run directory",
        ) from None


def train_target_tokenizer(recipe, pairs):
    """Parsing (§6.3): the whole-token vocabulary of the linearized training
    trees' symbols (`pipelines.SymbolTokenizer`), every symbol kept."""
    return pipelines.SymbolTokenizer.train(target for _, target in pairs)


def load_target_tokenizer(run, recipe):
    """The run's target tokenizer: the symbol vocabulary of a parsing run,
    else `None` (the shared tokenizer is the target's)."""
    if recipe.task != "parsing":
        return None
    if not os.path.exists(run.target_tokenizer_path):
        raise UserError(
            f"No target tokenizer at {run.target_tokenizer_path}; run "
            "`keras-transformer prepare` first."
        )
    return pipelines.load_tokenizer(run.target_tokenizer_path)


def source_ids_fn(tokenizer, max_length):
    """`fn(list of str) -> list of list of int`: the lines' source ids by
    `pipelines.encode_sources`, the path the export takes (pieces cut to
    `max_length - 1`, then eos), in one call."""

    def tokenize(texts):
        return pipelines.encode_sources(tokenizer, list(texts), max_length).to_list()

    return tokenize


def detokenize_fn(tokenizer):
    """`fn(list of list of int) -> list of str`, in one call."""
    import tensorflow as tf

    def detokenize(rows):
        if not rows:
            return []
        ids = tf.ragged.constant(rows, dtype=tf.int32, ragged_rank=1)
        return [text.decode("utf-8") for text in tokenizer.detokenize(ids).numpy()]

    return detokenize
