"""The parser's word-level inputs of the Transformer (§6.3; not in the paper)."""

from keras_transformer.layers.next_word_pointer import (
    NextWordPointer,
    check_word_windows,
)
from keras_transformer.layers.word_distance_bias import WordDistanceBias


class ParsingInputs:
    """`Transformer`'s next-word pointer and word-distance biases.

    A parsing model (`next_word_pointer`) adds the encoder's vector of the
    next word to cover to each decoder input (`NextWordPointer`); with
    `next_word_window` its cross-attention is also biased by word distance
    from that word, and with `encoder_word_window` the encoder's
    self-attention by word distance between pieces' words
    (`WordDistanceBias`, one table for every encoder layer, computed once per
    sentence from the pointer's word numbers). Every one is off by default.

    A mixin of `Transformer`: `_build_parsing_inputs` makes `self.pointer`
    and `self.encoder_word_distance` (`None` when off).
    """

    def _build_parsing_inputs(
        self,
        source_vocab_size,
        target_vocab_size,
        hidden_dim,
        num_heads,
        next_word_pointer,
        next_word_pooling,
        next_word_window,
        encoder_word_window,
        dtype,
    ):
        check_word_windows(
            next_word_pointer,
            next_word_pooling,
            next_word_window=next_word_window,
            encoder_word_window=encoder_word_window,
        )
        self.pointer = None
        if next_word_pointer:
            self.pointer = NextWordPointer(
                source_vocab_size,
                target_vocab_size,
                hidden_dim,
                pooling=next_word_pooling,
                distance_window=next_word_window,
                num_heads=num_heads,
                dtype=dtype,
                name="next_word_pointer",
            )
        self.encoder_word_distance = None
        if encoder_word_window:
            self.encoder_word_distance = WordDistanceBias(
                encoder_word_window,
                num_heads,
                dtype=dtype,
                name="encoder_word_distance",
            )

    def set_word_vocabularies(self, word_start_ids, word_symbol_ids):
        """Sets the next-word pointer's tables (`next_word_pointer=True`):
        the source ids whose piece begins a word and the target ids of the
        word symbols (see `NextWordPointer.set_vocabularies`)."""
        if self.pointer is None:
            raise ValueError(
                "The model has no next-word pointer. Received: next_word_pointer=False"
            )
        self.pointer.set_vocabularies(word_start_ids, word_symbol_ids)

    def _pointer(self, target_ids, source_ids, encoder_output):
        """`_decode`'s teacher-forced `pointer` `[B, T, D]` and
        `cross_attention_bias` `[B, H, T, S]`, as keyword arguments (none
        without the pointer, no bias without its window)."""
        if self.pointer is None:
            return {}
        outputs = self.pointer(target_ids, source_ids, encoder_output)
        if not self.pointer.distance_window:
            return {"pointer": outputs}
        pointer, bias = outputs
        return {"pointer": pointer, "cross_attention_bias": bias}

    def _pointer_cache(self, source_ids, encoder_output):
        """The cached search's pointer entries of the encoder cache:
        `{"pointer_memory": [B, S, D], "word_positions": ...}` (`{}` without
        the pointer), read at every step by `_cached_pointer`."""
        if self.pointer is None:
            return {}
        if source_ids is None:
            raise ValueError(
                "A model with the next-word pointer needs the source ids to "
                "build its decoding cache. Received: source_ids=None"
            )
        memory, positions = self.pointer.memory(source_ids, encoder_output)
        return {"pointer_memory": memory, "word_positions": positions}

    def _cached_pointer(self, encoder_cache, next_word_index, num_beams=None):
        """`decode_step`'s `pointer` `[B, t, D]` and `cross_attention_bias`,
        as keyword arguments, from the cached memory (`_pointer_cache`) and
        each new position's word: what `_pointer` computes teacher-forced,
        one step at a time (none without the pointer)."""
        if self.pointer is None:
            return {}
        if next_word_index is None:
            raise ValueError(
                "A model with the next-word pointer needs each position's "
                "next word. Received: next_word_index=None"
            )
        positions = encoder_cache["word_positions"]
        pointer = self.pointer.select(
            encoder_cache["pointer_memory"],
            positions,
            next_word_index,
            num_beams=num_beams,
        )
        bias = self.pointer.attention_bias(
            positions, next_word_index, num_beams=num_beams
        )
        return {"pointer": pointer, "cross_attention_bias": bias}

    def _encoder_attention_bias(self, source_ids):
        """The encoder's self-attention bias `[B, H, S, S]`, or `None`."""
        if self.encoder_word_distance is None:
            return None
        # [B, S]: the word of each piece
        words = self.pointer.word_numbers(source_ids)
        return self.encoder_word_distance(words, words)
