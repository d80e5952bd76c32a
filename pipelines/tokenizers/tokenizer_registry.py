"""The tokenizer kinds: one registry from a kind name to its class.

A tokenizer artefact records its kind (`tokenizer_artifact`); `load_tokenizer`
builds the class registered for it, and a recipe names its tokenizer by kind.
Two kinds learn the shared source-target vocabulary of §5.1: SentencePiece
BPE (En-De) and WordPiece (En-Fr). The third, `"symbols"`, is the whole-token
target vocabulary of parsing (§6.3), used as a separate target tokenizer.
The fourth, `"marian"`, is not trained: it comes with a model imported from
Marian / OPUS-MT (`MarianTokenizer`).
"""

import os
import types

from pipelines.tokenizers.marian_tokenizer import MarianTokenizer
from pipelines.tokenizers.sentencepiece_tokenizer import SentencePieceTokenizer
from pipelines.tokenizers.subword_tokenizer import SubwordTokenizer
from pipelines.tokenizers.symbol_tokenizer import SymbolTokenizer
from pipelines.tokenizers.tokenizer_artifact import read_artifact
from pipelines.tokenizers.wordpiece_tokenizer import WordPieceTokenizer

# Read-only: kind name -> `SubwordTokenizer` subclass, in a stable order.
TOKENIZER_KINDS = types.MappingProxyType(
    {
        cls.kind: cls
        for cls in (
            SentencePieceTokenizer,
            WordPieceTokenizer,
            SymbolTokenizer,
            MarianTokenizer,
        )
    }
)


def tokenizer_class(kind: str) -> type[SubwordTokenizer]:
    """Returns the tokenizer class registered for `kind`.

    Args:
        kind: str. A key of `TOKENIZER_KINDS`: `"sentencepiece"`,
            `"wordpiece"`, `"symbols"` or `"marian"`.

    Returns:
        A `SubwordTokenizer` subclass.
    """
    if not isinstance(kind, str) or kind not in TOKENIZER_KINDS:
        raise ValueError(
            f"Unknown tokenizer kind; expected one of {sorted(TOKENIZER_KINDS)}. "
            f"Received: kind={kind!r}"
        )
    return TOKENIZER_KINDS[kind]


def load_tokenizer(path: str | os.PathLike) -> SubwordTokenizer:
    """Loads a tokenizer artefact of any registered kind.

    Args:
        path: str or path-like. An artefact written by a tokenizer's `save`.

    Returns:
        A `SentencePieceTokenizer`, a `WordPieceTokenizer` or a
        `SymbolTokenizer`, as the artefact's kind says.
    """
    kind, payload = read_artifact(path)
    try:
        cls = tokenizer_class(kind)
    except ValueError as error:
        raise ValueError(f"{error} in {path}") from None
    return cls.from_payload(payload)
