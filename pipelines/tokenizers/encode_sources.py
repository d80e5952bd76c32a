"""`encode_sources`: source text to model input ids, the one path from text to
ids for training, evaluation, translation and the exported SavedModel."""

import tensorflow as tf

from pipelines.tokenizers.special_tokens import EOS_ID


def encode_sources(tokenizer, texts, max_length: int | None = None) -> tf.RaggedTensor:
    """Tokenizes source sentences as the model reads them: pieces, then eos.

    Every consumer of source text goes through this function, so training,
    evaluation (BLEU), `keras-transformer translate` and the exported
    SavedModel see the same ids for the same line, long lines included:

    - **Invalid UTF-8** is replaced, not refused: each invalid byte sequence
      becomes U+FFFD, as Python's `bytes.decode("utf-8", errors="replace")`
      does, so one bad line does not fail a batch.
    - **Truncation**: with `max_length`, the pieces are cut to
      `max_length - 1` before eos is appended, so no row is longer than
      `max_length` (the export's input limit, the recipe's training length).
      Training passes `None`: its length filter drops long pairs instead
      (`filter_by_length`) and counts them.
    - **eos** ends every source (tensor2tensor's convention, which the
      model is trained with); an empty line becomes `[eos]`.

    Args:
        tokenizer: a tokenizer with `tokenize(strings) -> RaggedTensor`.
        texts: `tf.string` [B] (a list of str is converted).
        max_length: int or `None`. The longest row, eos included; at least 2
            (a piece and eos). Defaults to `None`, no truncation.

    Returns:
        int32 `tf.RaggedTensor` [B, (S)]; `.to_tensor()` pads with 0 (`PAD_ID`).

    Examples:
        >>> encode_sources(tokenizer, ["Hello world."], max_length=4).to_list()
        [[151, 6, 31, 3]]
    """
    if max_length is not None and (
        isinstance(max_length, bool)
        or not isinstance(max_length, int)
        or max_length < 2
    ):
        raise ValueError(
            "`max_length` must leave room for a piece and eos (an int >= 2) or be "
            f"None. Received: max_length={max_length!r}"
        )
    texts = tf.strings.unicode_transcode(
        tf.convert_to_tensor(texts, tf.string),
        "UTF-8",
        "UTF-8",
        errors="replace",
        replacement_char=0xFFFD,
        replace_control_characters=False,
    )
    # [B] -> [B, (N)]
    pieces = tf.cast(tokenizer.tokenize(texts), tf.int32)
    if max_length is not None:
        # [B, (N)] -> [B, (N')], N' <= max_length - 1
        pieces = pieces[:, : max_length - 1]
    eos = tf.fill([pieces.nrows(), 1], tf.constant(EOS_ID, tf.int32))
    # [B, (N')] -> [B, (N' + 1)]
    return tf.concat([pieces, eos], axis=1)
