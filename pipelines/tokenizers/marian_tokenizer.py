"""Marian's tokenizer (OPUS-MT models in the Hugging Face layout), in the graph.

A Marian model folder holds two SentencePiece models, `source.spm` and
`target.spm`, and one `vocab.json` that maps pieces to the model's ids (the
SentencePiece models' own ids are not used). Source text is split into
pieces by `source.spm` and looked up in the map; an output id becomes its
piece, and the pieces are joined with `▁` read as a space, as Hugging Face's
`MarianTokenizer` does (`convert_tokens_to_string`). Training targets (a
fine-tuned import) are split by `target.spm` (`target_side`), as Hugging
Face's `text_target=` splits them. Both directions run in
TensorFlow (`tensorflow_text.SentencepieceTokenizer` and a lookup table), so
an export of an imported model still takes and returns raw strings.

Ids are renumbered into this package's layout (`special_tokens`: pad 0, unk
1, bos 2, eos 3; `marian_vocabulary`): Marian's `<pad>` (its last id in
OPUS-MT models) becomes 0, `<unk>` 1, `</s>` 3, and every other piece keeps
its order from id 4. Marian has no bos: its decoder starts from the pad
embedding, so id 2 is a second copy of Marian's pad row (the importer copies
the weights the same way). The vocabulary is one id longer than Marian's.

Kept from `MarianTokenizer`:
- A leading language code (`>>fra<< text`, multilingual targets) is one
  piece looked up whole; the rest of the line is split by `source.spm`.
- Pieces missing from `vocab.json` are unk.
- Decoding drops pad, bos, eos and unk (`skip_special_tokens=True`).
"""

import base64
import json
from collections.abc import Mapping

import sentencepiece
import tensorflow as tf
import tensorflow_text as tf_text
from sentencepiece import sentencepiece_model_pb2

from pipelines.tokenizers.special_tokens import (
    BOS_ID,
    BOS_PIECE,
    EOS_ID,
    NUM_RESERVED,
    PAD_ID,
    UNK_ID,
)
from pipelines.tokenizers.subword_tokenizer import SubwordTokenizer

# SentencePiece's whitespace mark.
WORD_BOUNDARY = "\u2581"
# Marian's special pieces (`MarianTokenizer`'s defaults).
MARIAN_UNK = "<unk>"
MARIAN_EOS = "</s>"
MARIAN_PAD = "<pad>"
# A language code at the start of a line, as `MarianTokenizer` finds it:
# `>>`, then up to the first `<<`. `(?s)`: `.` also matches newlines.
LANGUAGE_CODE = r"(?s)^(>>.*?<<)"


def marian_vocabulary(
    vocab: Mapping[str, int], pad_id: int, eos_id: int
) -> tuple[list[str], list[int]]:
    """Renumbers a Marian vocabulary into this package's special-id layout.

    Args:
        vocab: `{piece: id}`, the contents of `vocab.json`. Ids must be
            0..V-1, each once.
        pad_id: int. Marian's pad id (`config.json`'s `pad_token_id`), also
            its decoder start.
        eos_id: int. Marian's eos id (`eos_token_id`).

    Returns:
        `(pieces, marian_ids)`, each of length V + 1: our id `i` is the piece
        `pieces[i]` and takes the weights of Marian's id `marian_ids[i]`.
        Ids 0-3 are pad, unk, bos (Marian's pad again, under the name
        `<s>`) and eos; the other pieces follow in Marian's order.

    Examples:
        >>> marian_vocabulary({"</s>": 0, "<unk>": 1, "a": 2, "<pad>": 3}, 3, 0)
        (['<pad>', '<unk>', '<s>', '</s>', 'a'], [3, 1, 3, 0, 2])
    """
    ids = sorted(vocab.values())
    if ids != list(range(len(ids))):
        raise ValueError(
            "vocab.json must give each id 0..V-1 to exactly one piece. Received: "
            f"{len(ids)} pieces with ids {ids[:3]}...{ids[-3:]}"
        )
    if MARIAN_UNK not in vocab:
        raise ValueError(f"vocab.json has no {MARIAN_UNK!r} piece.")
    for name, value in (("pad_token_id", pad_id), ("eos_token_id", eos_id)):
        if not isinstance(value, int) or not 0 <= value < len(ids):
            raise ValueError(
                f"{name} must be an id of vocab.json (0..{len(ids) - 1}). "
                f"Received: {name}={value!r}"
            )
    unk_id = vocab[MARIAN_UNK]
    if len({pad_id, eos_id, unk_id}) != 3:
        raise ValueError(
            "Marian's pad, eos and unk ids must differ. Received: "
            f"pad_token_id={pad_id}, eos_token_id={eos_id}, <unk>={unk_id}"
        )
    by_id = {marian_id: piece for piece, marian_id in vocab.items()}
    marian_ids = [pad_id, unk_id, pad_id, eos_id] + [
        i for i in range(len(ids)) if i not in (pad_id, unk_id, eos_id)
    ]
    pieces = [by_id[i] for i in marian_ids]
    pieces[BOS_ID] = BOS_PIECE
    return pieces, marian_ids


class MarianTokenizer(SubwordTokenizer):
    """Marian's two SentencePiece models and shared vocabulary, in the graph.

    Built by `from_files` from a Hugging Face Marian folder (`source.spm`,
    `target.spm`, `vocab.json` and the pad and eos ids of `config.json`);
    saved and loaded as one artefact like the other kinds. It cannot be
    trained: it comes with an imported model (`keras_transformer.runs.
    marian_import`). See the module docstring for the id layout.

    Args:
        source_spm: bytes. `source.spm`, the source side's SentencePiece model.
        target_spm: bytes. `target.spm`: it splits training targets
            (`target_side`) and is kept for the export's assets; detokenizing
            joins pieces as `MarianTokenizer` does.
        pieces: list of str. Every piece in our id order (`marian_vocabulary`).
        name: str. Module name. Defaults to `"marian_tokenizer"`.
        side: `"source"` (the default) or `"target"`: which SentencePiece
            model `tokenize` splits with. The target side tokenizes training
            targets, as Hugging Face's `MarianTokenizer(text_target=...)`
            does (`target_side`); both sides detokenize alike and share one
            artefact.

    References:
        - [Junczys-Dowmunt et al., 2018. Marian: Fast Neural Machine Translation in
          C++](https://arxiv.org/abs/1804.00344).
        - [Kudo & Richardson, 2018. SentencePiece: A simple and language independent
          subword tokenizer and detokenizer for Neural Text Processing](
          https://aclanthology.org/D18-2012/).

    Examples:
        >>> tokenizer = MarianTokenizer.from_files(
        ...     "source.spm", "target.spm", "vocab.json", pad_id=58100, eos_id=0)
        >>> tokenizer.detokenize(tokenizer.tokenize(["Hello world."]))
    """

    kind = "marian"
    default_vocab_size = None

    def __init__(
        self,
        source_spm: bytes,
        target_spm: bytes,
        pieces: list[str],
        name: str = "marian_tokenizer",
        side: str = "source",
    ):
        if side not in ("source", "target"):
            raise ValueError(
                f"side must be 'source' or 'target'. Received: side={side!r}"
            )
        pieces = list(pieces)
        if len(pieces) <= NUM_RESERVED or len(set(pieces)) != len(pieces):
            raise ValueError(
                "pieces must hold the four special pieces and at least one "
                f"more, each once. Received: {len(pieces)} pieces, "
                f"{len(set(pieces))} distinct"
            )
        for label, model in (("source_spm", source_spm), ("target_spm", target_spm)):
            _check_spm(label, model)
        payload = json.dumps(
            {
                "source_spm": base64.b64encode(source_spm).decode("ascii"),
                "target_spm": base64.b64encode(target_spm).decode("ascii"),
                "pieces": pieces,
            },
            sort_keys=True,
            ensure_ascii=False,
        ).encode("utf-8")
        super().__init__(payload, len(pieces), name=name)
        self._source_spm = bytes(source_spm)
        self._target_spm = bytes(target_spm)
        self._piece_list = pieces
        self.side = side
        self._spm = tf_text.SentencepieceTokenizer(
            model=self._source_spm if side == "source" else self._target_spm,
            out_type=tf.string,
        )
        self._pieces = tf.constant(pieces, tf.string)  # [V]
        # pad and bos are never looked up: the source model never outputs them.
        keys = [(p, i) for i, p in enumerate(pieces) if i not in (PAD_ID, BOS_ID)]
        self._table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                keys=tf.constant([p for p, _ in keys], tf.string),
                values=tf.constant([i for _, i in keys], tf.int64),
            ),
            default_value=UNK_ID,
        )

    @classmethod
    def from_files(
        cls, source_spm, target_spm, vocab_json, pad_id: int, eos_id: int
    ) -> "MarianTokenizer":
        """Reads a Hugging Face Marian folder's tokenizer files.

        Args:
            source_spm: str. The path of `source.spm`.
            target_spm: str. The path of `target.spm`.
            vocab_json: str. The path of `vocab.json`.
            pad_id: int. Marian's pad id (`config.json`).
            eos_id: int. Marian's eos id (`config.json`).

        Returns:
            A `MarianTokenizer`.
        """
        with open(vocab_json, encoding="utf-8") as file:
            vocab = json.load(file)
        if not isinstance(vocab, dict):
            raise ValueError(
                f"vocab.json must map pieces to ids. Received: {type(vocab).__name__} "
                f"in {vocab_json}"
            )
        pieces, _ = marian_vocabulary(vocab, pad_id, eos_id)
        with open(source_spm, "rb") as file:
            source = file.read()
        with open(target_spm, "rb") as file:
            target = file.read()
        return cls(source, target, pieces)

    @classmethod
    def _train_payload(cls, texts, vocab_size, **options) -> bytes:
        raise ValueError(
            "A Marian tokenizer comes with an imported model and cannot be "
            "trained (`keras-transformer import-marian`). Received: kind='marian'"
        )

    @classmethod
    def from_payload(cls, payload: bytes) -> "MarianTokenizer":
        """Builds the tokenizer from its JSON payload (see `__init__`)."""
        data = json.loads(payload.decode("utf-8"))
        return cls(
            base64.b64decode(data["source_spm"]),
            base64.b64decode(data["target_spm"]),
            data["pieces"],
        )

    def target_side(self) -> "MarianTokenizer":
        """This tokenizer splitting with `target.spm`: the targets of a
        fine-tuning run's training pairs (the pipelines split targets with
        the tokenizer's `target_side`). Same pieces, ids, payload and
        fingerprint."""
        return MarianTokenizer(
            self._source_spm,
            self._target_spm,
            self._piece_list,
            name=f"{self.name}_target",
            side="target",
        )

    @property
    def vocabulary(self) -> list[str]:
        """Every piece in id order, the special pieces first."""
        return list(self._piece_list)

    def asset_files(self) -> dict[str, bytes]:
        """The Hugging Face files an export keeps beside the model."""
        vocab = {p: i for i, p in enumerate(self._piece_list) if i != BOS_ID}
        return {
            "source.spm": self._source_spm,
            "target.spm": self._target_spm,
            "vocab.json": json.dumps(vocab, ensure_ascii=False, indent=1).encode(),
        }

    def tokenize(self, strings: tf.Tensor) -> tf.RaggedTensor:
        """`tf.string` [B] (or scalar) -> int32 ids [B, (N)] (or [N]), split
        by `source.spm` (by `target.spm` on the target side).

        A leading `>>code<<` is one piece; pieces outside the vocabulary are
        unk. No eos is added (`encode_sources` adds it).
        """
        strings = tf.convert_to_tensor(strings, tf.string)
        if strings.shape.rank == 0:
            return self.tokenize(tf.expand_dims(strings, 0))[0]
        has_code = tf.strings.regex_full_match(strings, LANGUAGE_CODE + ".*")
        codes = tf.strings.regex_replace(strings, LANGUAGE_CODE + ".*", r"\1")
        rest = tf.where(
            has_code, tf.strings.regex_replace(strings, LANGUAGE_CODE, ""), strings
        )
        # [B, (0 or 1)] code pieces, then [B, (N)] SentencePiece pieces
        code_pieces = tf.ragged.boolean_mask(
            tf.expand_dims(codes, 1), tf.expand_dims(has_code, 1)
        )
        pieces = tf.concat([code_pieces, self._spm.tokenize(rest)], axis=1)
        ids = tf.ragged.map_flat_values(self._table.lookup, pieces)
        return tf.cast(ids, tf.int32)

    def detokenize(self, ids) -> tf.Tensor:
        """int ids [B, (N)] or padded [B, N] -> `tf.string` [B].

        Pad, bos, eos and unk are dropped (Hugging Face's
        `skip_special_tokens=True`), and so is an id outside the vocabulary;
        the other pieces are joined, `▁` read as a space, and stripped.
        """
        ids = self._ragged_ids(ids)
        keep = (
            (ids != PAD_ID)
            & (ids != BOS_ID)
            & (ids != EOS_ID)
            & (ids != UNK_ID)
            & (ids >= 0)
            & (ids < self.vocab_size)
        )
        kept = tf.ragged.boolean_mask(ids, keep)
        text = tf.strings.reduce_join(
            tf.ragged.map_flat_values(tf.gather, self._pieces, kept), axis=-1
        )
        return tf.strings.strip(tf.strings.regex_replace(text, WORD_BOUNDARY, " "))

    def id_to_piece(self, ids: tf.Tensor) -> tf.Tensor:
        """int ids -> their pieces as `tf.string` (ids are not checked)."""
        return tf.gather(self._pieces, ids)


def _check_spm(label: str, model: bytes) -> None:
    """Refuses what the in-graph detokenizer cannot spell: byte pieces."""
    proto = sentencepiece_model_pb2.ModelProto()
    try:
        proto.ParseFromString(model)
        sentencepiece.SentencePieceProcessor(model_proto=model)
    except Exception as error:  # noqa: BLE001 - any parse failure is a bad file
        raise ValueError(
            f"{label} is not a SentencePiece model. Received: {len(model)} bytes "
            f"({error})"
        ) from None
    if proto.trainer_spec.byte_fallback:
        raise ValueError(
            f"{label} uses byte fallback, which imported Marian tokenizers do not "
            f"support. Received: {label} with trainer_spec.byte_fallback=True"
        )
