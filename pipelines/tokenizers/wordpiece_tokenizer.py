"""WordPiece: a shared subword vocabulary run in the graph.

§5.1 (En-Fr): "split tokens into a 32000 word-piece vocabulary". The vocabulary
is learned with tensorflow-text's WordPiece learner
(`tensorflow_text.tools.wordpiece_vocab`), which is pure Python and slow: learn
it on a sample (`pipelines.sample_texts`). In the graph, text is NFKC-normalised,
split on whitespace only (punctuation stays attached, so spacing is
recoverable) and cut into word-pieces by `tensorflow_text.FastWordpieceTokenizer`;
detokenization glues `##` pieces back and joins words with single spaces. So
`detokenize(tokenize(x)) == x` for NFKC-normalised `x` with single spaces whose
characters all occur in the training texts (every training character gets a
piece of each kind, word-initial and `##`-suffix; other words map to unk).
"""

import collections
import unicodedata
from collections.abc import Iterable

import tensorflow as tf
import tensorflow_text as tf_text
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib

from pipelines.tokenizers.special_tokens import (
    BOS_ID,
    EOS_ID,
    NUM_RESERVED,
    PAD_ID,
    RESERVED_PIECES,
    UNK_ID,
    UNK_PIECE,
)
from pipelines.tokenizers.subword_tokenizer import SubwordTokenizer

SUFFIX_INDICATOR = "##"


def _vocabulary_payload(vocabulary: list[str]) -> bytes:
    """The artefact payload of a vocabulary: its pieces, newline-joined UTF-8."""
    return "\n".join(vocabulary).encode("utf-8")


class WordPieceTokenizer(SubwordTokenizer):
    """A WordPiece vocabulary as a `tf.Module`: strings <-> int32 ids.

    Does not add bos/eos: the pipeline does. Ids 0-3 are pad, unk, bos, eos.
    Saving, loading and the fingerprint are `SubwordTokenizer`'s; the payload
    is the vocabulary as newline-joined UTF-8.

    Args:
        vocabulary: list of str. Pieces in id order; suffix pieces start with
            `##`; the first four are
            `pipelines.tokenizers.special_tokens.RESERVED_PIECES`.
        name: str. Module name. Defaults to `"wordpiece_tokenizer"`.

    References:
        - [Wu et al., 2016. Google's Neural Machine Translation System: Bridging the Gap
          between Human and Machine Translation](https://arxiv.org/abs/1609.08144), §4.1
          (the wordpiece model).
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §5.1.
    """

    kind = "wordpiece"
    # §5.1, En-Fr: "split tokens into a 32000 word-piece vocabulary".
    default_vocab_size = 32_000

    def __init__(self, vocabulary: list[str], name: str = "wordpiece_tokenizer"):
        vocabulary = list(vocabulary)
        if tuple(vocabulary[:NUM_RESERVED]) != RESERVED_PIECES:
            raise ValueError(
                f"A WordPiece vocabulary must start with {list(RESERVED_PIECES)}. "
                f"Received: {vocabulary[:NUM_RESERVED]}"
            )
        if len(set(vocabulary)) != len(vocabulary) or any(
            not piece or "\n" in piece for piece in vocabulary
        ):
            raise ValueError(
                "WordPiece pieces must be unique, non-empty and without newlines. "
                f"Received: {len(vocabulary)} pieces, {len(set(vocabulary))} unique"
            )
        super().__init__(_vocabulary_payload(vocabulary), len(vocabulary), name=name)
        self._vocabulary = vocabulary
        self._words = tf_text.WhitespaceTokenizer()
        self._pieces = tf_text.FastWordpieceTokenizer(
            vocab=vocabulary,
            suffix_indicator=SUFFIX_INDICATOR,
            unknown_token=UNK_PIECE,
            no_pretokenization=True,
            support_detokenization=True,
            token_out_type=tf.int32,
        )

    @classmethod
    def _train_payload(
        cls,
        texts: Iterable[str],
        vocab_size: int,
        *,
        max_unique_chars: int = 1000,
        max_input_words: int = 5_000_000,
    ) -> bytes:
        """Learns a vocabulary; `train(texts, vocab_size, **options)` calls it.

        Args:
            texts: iterable of str. Source and target sentences.
            vocab_size: int. Target size before character coverage, special
                pieces included. `train` defaults it to `32000` (§5.1, En-Fr).
            max_unique_chars: int. Alphabet size: the most frequent characters
                get word-initial and `##` pieces. Defaults to `1000`.
            max_input_words: int. Distinct words the learner considers (most
                frequent first). Defaults to `5000000`.

        Returns:
            The vocabulary as newline-joined UTF-8.
        """
        counts = collections.Counter()
        for text in texts:
            counts.update(unicodedata.normalize("NFKC", text).split())
        learned = wordpiece_tokenizer_learner_lib.learn(
            counts,
            vocab_size=vocab_size,
            reserved_tokens=list(RESERVED_PIECES),
            lower_thresh=1,
            max_input_tokens=max_input_words,
            max_unique_chars=max_unique_chars,
            joiner=SUFFIX_INDICATOR,
        )
        characters = collections.Counter()
        for word, count in counts.items():
            for char in word:
                characters[char] += count
        vocabulary = list(RESERVED_PIECES)
        vocabulary += [p for p in learned if p not in RESERVED_PIECES]
        present = set(vocabulary)
        for char, _ in characters.most_common(max_unique_chars):
            for piece in (char, SUFFIX_INDICATOR + char):
                if piece not in present:
                    vocabulary.append(piece)
                    present.add(piece)
        return _vocabulary_payload(vocabulary)

    @classmethod
    def from_payload(cls, payload: bytes) -> "WordPieceTokenizer":
        """Builds the tokenizer from its newline-joined UTF-8 vocabulary."""
        return cls(payload.decode("utf-8").split("\n"))

    @property
    def vocabulary(self) -> list[str]:
        """The pieces in id order."""
        return list(self._vocabulary)

    def tokenize(self, strings: tf.Tensor) -> tf.RaggedTensor:
        """`tf.string` [B] (or scalar) -> int32 ids [B, (N)] (or [N])."""
        strings = tf_text.normalize_utf8(tf.convert_to_tensor(strings), "NFKC")
        words = self._words.tokenize(strings)  # [B, (W)]
        pieces = self._pieces.tokenize(words)  # [B, (W), (P)]
        return pieces.merge_dims(-2, -1)  # [B, (N)]

    def detokenize(self, ids) -> tf.Tensor:
        """int ids [B, (N)] or padded [B, N] -> `tf.string` [B].

        Pad, bos and eos ids are dropped.
        """
        ids = self._ragged_ids(ids)
        keep = (ids != PAD_ID) & (ids != BOS_ID) & (ids != EOS_ID)
        if isinstance(ids, tf.RaggedTensor):
            ids = tf.ragged.boolean_mask(ids, keep)
        else:
            ids = tf.boolean_mask(ids, keep)
        return self._pieces.detokenize(ids)

    def id_to_piece(self, ids: tf.Tensor) -> tf.Tensor:
        """int ids -> their pieces as `tf.string`."""
        return tf.gather(tf.constant(self._vocabulary), ids)

    def word_start_ids(self) -> list[int]:
        """Every piece without the `##` suffix mark, and unknown (a word
        with no pieces is one unknown id); not pad, bos or eos."""
        return [UNK_ID] + [
            index
            for index, piece in enumerate(self._vocabulary)
            if index >= NUM_RESERVED and not piece.startswith(SUFFIX_INDICATOR)
        ]
