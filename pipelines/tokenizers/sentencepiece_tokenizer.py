"""SentencePiece BPE: a shared subword vocabulary run in the graph.

§5.1: "Sentences were encoded using byte-pair encoding, which has a shared
source-target vocabulary of about 37000 tokens" (En-De). Training uses the
`sentencepiece` package; tokenization and detokenization use
`tensorflow_text.SentencepieceTokenizer`, so the same model proto runs in
`tf.data`, in `tf.function` and inside an exported SavedModel.

Normalisation is SentencePiece's default `nmt_nfkc` (NFKC plus whitespace
clean-up), and `byte_fallback` spells characters outside the vocabulary as
UTF-8 bytes, so `detokenize(tokenize(x)) == x` for every NFKC-normalised `x`
with single spaces and no leading or trailing space.
"""

import io
import os
from collections.abc import Iterable

import sentencepiece
import tensorflow as tf
import tensorflow_text as tf_text
from sentencepiece import sentencepiece_model_pb2

from pipelines.tokenizers.special_tokens import (
    BOS_ID,
    BOS_PIECE,
    EOS_ID,
    EOS_PIECE,
    PAD_ID,
    PAD_PIECE,
    UNK_ID,
    UNK_PIECE,
)
from pipelines.tokenizers.subword_tokenizer import SubwordTokenizer


def _without_thread_count(model_proto: bytes) -> bytes:
    """Clears `trainer_spec.num_threads`, the one machine-dependent field."""
    model = sentencepiece_model_pb2.ModelProto()
    model.ParseFromString(model_proto)
    model.trainer_spec.ClearField("num_threads")
    return model.SerializeToString(deterministic=True)


# SentencePiece's whitespace mark, the first character of a word's first piece.
WORD_BOUNDARY = "\u2581"


class SentencePieceTokenizer(SubwordTokenizer):
    """A SentencePiece model as a `tf.Module`: strings <-> int32 ids.

    Does not add bos/eos: the pipeline does. Ids 0-3 are pad, unk, bos, eos
    (`pipelines.tokenizers.special_tokens`). Saving, loading and the fingerprint are
    `SubwordTokenizer`'s; the payload is the model proto.

    Caveat (tensorflow-text 2.21): `tf.random.set_seed` (so also
    `keras.utils.set_random_seed`) clears TensorFlow's eager kernel cache,
    which owns the SentencePiece resource; a tokenizer built before the call
    then fails with `NotFoundError: Resource ... SentencepieceOp ... does not
    exist`. Set seeds first, or rebuild with `SentencePieceTokenizer(
    tokenizer.model_proto)` (cheap).

    Args:
        model_proto: bytes. A serialized SentencePiece model whose special ids
            are those of `pipelines.tokenizers.special_tokens`.
        name: str. Module name. Defaults to `"sentencepiece_tokenizer"`.

    References:
        - [Kudo & Richardson, 2018. SentencePiece: A simple and language independent
          subword tokenizer and detokenizer for Neural Text Processing](
          https://aclanthology.org/D18-2012/).
        - [Sennrich et al., 2016. Neural Machine Translation of Rare Words with Subword
          Units](https://aclanthology.org/P16-1162/) (byte-pair encoding).
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §5.1.

    Examples:
        >>> tokenizer = SentencePieceTokenizer.train(texts, vocab_size=1000)
        >>> ids = tokenizer.tokenize(["Hello world."])   # RaggedTensor [1, (N)]
        >>> tokenizer.detokenize(ids)                     # [b"Hello world."]
    """

    kind = "sentencepiece"
    # §5.1, En-De: "a shared source-target vocabulary of about 37000 tokens".
    default_vocab_size = 37_000

    def __init__(self, model_proto: bytes, name: str = "sentencepiece_tokenizer"):
        processor = sentencepiece.SentencePieceProcessor(model_proto=model_proto)
        received = (
            processor.pad_id(),
            processor.unk_id(),
            processor.bos_id(),
            processor.eos_id(),
        )
        if received != (PAD_ID, UNK_ID, BOS_ID, EOS_ID):
            raise ValueError(
                "SentencePiece model must have pad, unk, bos, eos ids "
                f"{(PAD_ID, UNK_ID, BOS_ID, EOS_ID)}. Received: {received}"
            )
        super().__init__(model_proto, processor.get_piece_size(), name=name)
        self._tokenizer = tf_text.SentencepieceTokenizer(
            model=self._payload, out_type=tf.int32
        )

    @classmethod
    def _train_payload(
        cls,
        texts: Iterable[str],
        vocab_size: int,
        *,
        character_coverage: float = 1.0,
        max_sentence_length: int = 16_384,
        num_threads: int | None = None,
    ) -> bytes:
        """Trains a BPE model; `train(texts, vocab_size, **options)` calls it.

        Deterministic: every given text is used (no sampling inside
        SentencePiece; sample beforehand with `pipelines.sample_texts`), BPE
        merges do not depend on the thread count, and the thread count is
        cleared from the stored trainer spec, so equal texts and arguments give
        equal fingerprints on any machine.

        Args:
            texts: iterable of str. Source and target sentences.
            vocab_size: int. Vocabulary size, special ids included; an upper
                bound on small corpora. `train` defaults it to `37000` (§5.1,
                En-De).
            character_coverage: float. Share of characters given their own
                piece; the rest fall back to bytes. Defaults to `1.0`.
            max_sentence_length: int. Longer texts (in bytes) are skipped by
                the trainer. Defaults to `16384`.
            num_threads: int or `None`. Trainer threads; `None` uses all CPUs.

        Returns:
            The serialized model proto.
        """
        model = io.BytesIO()
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(texts),
            model_writer=model,
            model_type="bpe",
            vocab_size=vocab_size,
            hard_vocab_limit=False,
            character_coverage=character_coverage,
            byte_fallback=True,
            normalization_rule_name="nmt_nfkc",
            pad_id=PAD_ID,
            unk_id=UNK_ID,
            bos_id=BOS_ID,
            eos_id=EOS_ID,
            pad_piece=PAD_PIECE,
            unk_piece=UNK_PIECE,
            bos_piece=BOS_PIECE,
            eos_piece=EOS_PIECE,
            input_sentence_size=0,
            shuffle_input_sentence=False,
            max_sentence_length=max_sentence_length,
            num_threads=num_threads or os.cpu_count() or 1,
            minloglevel=2,
        )
        return _without_thread_count(model.getvalue())

    @classmethod
    def from_payload(cls, payload: bytes) -> "SentencePieceTokenizer":
        """Builds the tokenizer from its model proto."""
        return cls(payload)

    @property
    def model_proto(self) -> bytes:
        """The serialized SentencePiece model."""
        return self._payload

    def asset_files(self) -> dict[str, bytes]:
        """The model proto, for readers outside TensorFlow."""
        return {"sentencepiece.model": self._payload}

    def tokenize(self, strings: tf.Tensor) -> tf.RaggedTensor:
        """`tf.string` [B] (or scalar) -> int32 ids [B, (N)] (or [N])."""
        return self._tokenizer.tokenize(strings)

    def detokenize(self, ids) -> tf.Tensor:
        """int ids [B, (N)] or padded [B, N] -> `tf.string` [B].

        Pad, bos and eos ids are dropped (SentencePiece control symbols).
        """
        return self._tokenizer.detokenize(self._ragged_ids(ids))

    def id_to_piece(self, ids: tf.Tensor) -> tf.Tensor:
        """int ids -> their pieces as `tf.string`."""
        return self._tokenizer.id_to_string(ids)

    def word_start_ids(self) -> list[int]:
        """The pieces that begin with SentencePiece's word boundary mark
        U+2581 (each whitespace-separated word's first piece does)."""
        processor = sentencepiece.SentencePieceProcessor(model_proto=self._payload)
        return [
            index
            for index in range(processor.get_piece_size())
            if processor.id_to_piece(index).startswith(WORD_BOUNDARY)
        ]
