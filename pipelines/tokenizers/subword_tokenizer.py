"""The base class of the subword tokenizers: what every kind shares.

A tokenizer is one payload (the bytes that define it: a model proto, a
vocabulary) plus in-graph code that runs it. The payload alone is what is
trained, saved, loaded and fingerprinted, so a kind only says how it learns a
payload (`_train_payload`), how it builds itself from one (`from_payload`) and
how it tokenizes and detokenizes. The one-file artefact format lives in
`tokenizer_artifact`; the registry of kinds in `tokenizer_registry`.
"""

import abc
import os
from collections.abc import Iterable
from typing import ClassVar

import tensorflow as tf

from pipelines.tokenizers.special_tokens import NUM_RESERVED, PAD_ID
from pipelines.tokenizers.tokenizer_artifact import (
    content_fingerprint,
    read_artifact,
    write_artifact,
)


class SubwordTokenizer(tf.Module, metaclass=abc.ABCMeta):
    """Base class of the tokenizers: strings <-> int32 ids, one payload.

    Subclasses set `kind` (the name an artefact records) and
    `default_vocab_size`, and implement `from_payload`, `_train_payload`,
    `tokenize`, `detokenize` and `id_to_piece`. Ids 0-3 are pad, unk, bos, eos
    (`pipelines.tokenizers.special_tokens`); tokenizers never add bos/eos.

    Args:
        payload: bytes. The bytes that define the tokenizer; what `save`
            writes and `fingerprint` hashes.
        vocab_size: int. Number of ids, special ids included.
        name: str. Module name.
    """

    kind: ClassVar[str | None] = None
    default_vocab_size: ClassVar[int | None] = None

    def __init__(self, payload: bytes, vocab_size: int, name: str):
        super().__init__(name=name)
        self._payload = bytes(payload)
        self._vocab_size = int(vocab_size)
        self._fingerprint = content_fingerprint(self.kind, self._payload)

    @classmethod
    def train(
        cls, texts: Iterable[str], vocab_size: int | None = None, **options
    ) -> "SubwordTokenizer":
        """Learns a tokenizer from `texts` (both languages: a shared vocabulary).

        §5.1: the source and target sentences share one vocabulary, so pass
        the texts of both sides (`pipelines.sample_texts`).

        Args:
            texts: iterable of str. Source and target sentences.
            vocab_size: int or `None`. Vocabulary size, special ids included.
                `None` uses the kind's `default_vocab_size`. Defaults to
                `None`.
            **options: the kind's training options, keyword only (see its
                `_train_payload`).

        Returns:
            An instance of `cls`.
        """
        if vocab_size is None:
            vocab_size = cls.default_vocab_size
        if not isinstance(vocab_size, int) or vocab_size <= NUM_RESERVED:
            raise ValueError(
                f"vocab_size must be an integer > {NUM_RESERVED}. "
                f"Received: vocab_size={vocab_size}"
            )
        return cls.from_payload(cls._train_payload(texts, vocab_size, **options))

    @classmethod
    @abc.abstractmethod
    def _train_payload(cls, texts: Iterable[str], vocab_size: int, **options) -> bytes:
        """Learns the payload from `texts`; `vocab_size` is already checked."""

    @classmethod
    @abc.abstractmethod
    def from_payload(cls, payload: bytes) -> "SubwordTokenizer":
        """Builds the tokenizer that `payload` (an artefact's bytes) defines."""

    @property
    def vocab_size(self) -> int:
        """Number of ids, special ids included."""
        return self._vocab_size

    @property
    def fingerprint(self) -> str:
        """`"sha256:<hex>"` of the kind and payload (see `tokenizer_artifact`)."""
        return self._fingerprint

    def save(self, path: str | os.PathLike) -> str:
        """Writes the one-file artefact; returns the fingerprint."""
        return write_artifact(path, self.kind, self._payload, self._vocab_size)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "SubwordTokenizer":
        """Reads an artefact written by `save`, checking its fingerprint.

        The artefact must be of this class's kind; `pipelines.load_tokenizer`
        loads one of any kind.
        """
        kind, payload = read_artifact(path)
        if kind != cls.kind:
            raise ValueError(
                f"Expected a {cls.kind!r} tokenizer artefact. Received: "
                f"kind={kind!r} in {path}"
            )
        return cls.from_payload(payload)

    @staticmethod
    def _ragged_ids(ids) -> tf.RaggedTensor | tf.Tensor:
        """Ids for `detokenize`: padded [B, N] -> ragged [B, (N)], as int32."""
        if not isinstance(ids, tf.RaggedTensor):
            ids = tf.convert_to_tensor(ids)
            if ids.shape.rank == 2:
                ids = tf.RaggedTensor.from_tensor(ids, padding=PAD_ID)
        return tf.cast(ids, tf.int32)

    @abc.abstractmethod
    def tokenize(self, strings: tf.Tensor) -> tf.RaggedTensor:
        """`tf.string` [B] (or scalar) -> int32 ids [B, (N)] (or [N])."""

    def target_side(self) -> "SubwordTokenizer":
        """The tokenizer that splits training targets: this one for a shared
        vocabulary (§5.1); a kind with a target model of its own overrides
        it (`MarianTokenizer`'s `target.spm`)."""
        return self

    @abc.abstractmethod
    def detokenize(self, ids) -> tf.Tensor:
        """int ids [B, (N)] or padded [B, N] -> `tf.string` [B]."""

    @abc.abstractmethod
    def id_to_piece(self, ids: tf.Tensor) -> tf.Tensor:
        """int ids -> their pieces as `tf.string`."""

    def asset_files(self) -> dict[str, bytes]:
        """`{file name: bytes}` an export keeps beside the model for readers
        outside TensorFlow (`savedmodels.export_translator`); none by default."""
        return {}

    def word_start_ids(self) -> list[int]:
        """The ids whose piece begins a whitespace-separated word, sorted.

        A sentence's n-th such piece is the first piece of its n-th word (the
        next-word pointer of parsing reads words this way). Kinds that can
        tell override this.
        """
        raise NotImplementedError(
            "This tokenizer does not mark where words start. Received: "
            f"kind={self.kind!r}"
        )
