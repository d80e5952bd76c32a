"""The bundled parallel corpora (`pipelines/data/`, shipped as package data).

See `pipelines/data/README.md` for their origin, licences and splits. The
default corpus is the LibreOffice help, English -> German, which matches the
paper's first task (En-De, §5.1) in direction if not in size.
"""

import pathlib

import tensorflow as tf

from pipelines.text.local_files import read_parallel_tsv

# Package data: installed next to this module (pyproject `package-data`).
DATA_DIR = pathlib.Path(__file__).resolve().parent.parent / "data"

DEFAULT_CORPUS = "libreoffice_help"
DEFAULT_LANGUAGE_PAIR = "en-de"

# corpus -> language pair -> available splits.
BUNDLED_CORPORA = {
    "libreoffice_help": {
        "en-de": ("train", "dev", "test"),
        "en-fr": ("train", "dev", "test"),
    },
    "ding": {"en-de": ("train", "dev", "test", "phrases")},
    "fixture": {"en-de": ("all",)},
}


def bundled_corpus_path(
    corpus: str = DEFAULT_CORPUS,
    language_pair: str = DEFAULT_LANGUAGE_PAIR,
    split: str = "train",
) -> pathlib.Path:
    """Returns the path of one bundled TSV file (`english<TAB>foreign`).

    Args:
        corpus: str. One of `BUNDLED_CORPORA`. Defaults to `"libreoffice_help"`.
        language_pair: str. `"en-de"` or `"en-fr"`. Defaults to `"en-de"`.
        split: str. `"train"`, `"dev"`, `"test"` (`"phrases"` for Ding, `"all"`
            for the 300-pair test fixture). Defaults to `"train"`.

    Returns:
        A `pathlib.Path` under the package's `data/` folder.
    """
    if corpus not in BUNDLED_CORPORA:
        raise ValueError(
            f"Unknown bundled corpus; expected one of {sorted(BUNDLED_CORPORA)}. "
            f"Received: corpus={corpus!r}"
        )
    pairs = BUNDLED_CORPORA[corpus]
    if language_pair not in pairs:
        raise ValueError(
            f"Corpus {corpus!r} has language pairs {sorted(pairs)}. "
            f"Received: language_pair={language_pair!r}"
        )
    if split not in pairs[language_pair]:
        raise ValueError(
            f"Corpus {corpus!r} {language_pair} has splits "
            f"{list(pairs[language_pair])}. Received: split={split!r}"
        )
    data = DATA_DIR
    if corpus == "fixture":
        return data / corpus / f"{language_pair}.tsv"
    return data / corpus / f"{language_pair}.{split}.tsv.gz"


def load_bundled(
    corpus: str = DEFAULT_CORPUS,
    language_pair: str = DEFAULT_LANGUAGE_PAIR,
    split: str = "train",
    reverse: bool = False,
) -> tf.data.Dataset:
    """Reads a bundled corpus as a dataset of `(source, target)` strings.

    Args:
        corpus: str. As in `bundled_corpus_path`.
        language_pair: str. As in `bundled_corpus_path`.
        split: str. As in `bundled_corpus_path`.
        reverse: bool. If `True` translate into English instead of from it.
            Defaults to `False`.

    Returns:
        A `tf.data.Dataset` of `(source, target)` scalar `tf.string` pairs in
        file order (shuffle it for training: the files are in page order).
    """
    path = bundled_corpus_path(corpus, language_pair, split)
    return read_parallel_tsv(path, reverse=reverse)
