"""The Transformer's decoding entry points: encode once, then cached steps."""

from keras import ops


class CachedDecoding:
    """`Transformer`'s methods for incremental decoding (paper §6.1).

    The same layers, and so the same weights, as the functional model: the
    encoder stack runs once (`encode`), its output is projected once into each
    decoder layer's cross-attention keys and values (`init_cache`), and the
    decoder then runs one position (or a chunk of positions) at a time over a
    self-attention key/value cache (`decode_step`).

    The cache comes in the two parts a search carries differently:

    - `self_caches`, the loop state: per decoder layer a tuple `(keys
      [B, H, L, d_k], values [B, H, L, d_v])` (heads first, see
      `CachedMultiHeadAttention`), written at each step.
    - `encoder_cache`, fixed while decoding: `{"source_padding_mask": [B, S]
      bool, "cross_attention": [per decoder layer (keys [B, H, S, d_k],
      values [B, H, S, d_v])]}`.

    Every leaf is batch first. For beam search with K beams per sentence the
    encoder cache keeps one row per sentence (`decode_step(num_beams=K)`);
    the self-attention cache has one row per beam (tile and reorder it along
    axis 0) or, with `share_beam_cache=True`, one row per sentence with K
    slots per position.

    A mixin of `Transformer`: it uses its `_encode`, `_decode` and
    `decoder_blocks`.

    Examples:
        >>> encoder_output, source_mask = model.encode(source_ids)
        >>> self_caches, encoder_cache = model.init_cache(
        ...     encoder_output, source_mask, max_length=8)
        >>> logits, self_caches = model.decode_step(
        ...     bos_ids, 0, self_caches, encoder_cache)  # [B, 1] -> [B, 1, V]
    """

    def encode(self, source_ids, training=False):
        """Runs the encoder stack once.

        Args:
            source_ids: int tensor `[B, S]`, 0 for padding.
            training: bool. Whether dropout is active. Defaults to `False`.

        Returns:
            A tuple `(encoder_output [B, S, D], source_padding_mask [B, S])`.
        """
        return self._encode(source_ids, training=training)

    def init_cache(
        self, encoder_output, source_padding_mask, max_length, source_ids=None
    ):
        """The decoding cache for `decode_step`, before any target token.

        Args:
            encoder_output: tensor `[B, S, D]` from `encode`.
            source_padding_mask: bool tensor `[B, S]` from `encode`.
            max_length: int. L, the self-attention slots per row (the target
                positions; `T * K` for a beam-shared cache).
            source_ids: int tensor `[B, S]`, the encoded source; needed (only)
                by a model with the next-word pointer, whose encoder cache
                then also holds `"pointer_memory"` `[B, S, D]` and
                `"word_positions"` `[B, S]` (`NextWordPointer.memory`).

        Returns:
            A tuple `(self_caches, encoder_cache)` (see the class docstring):
            zero self-attention keys `[B, H, L, d_k]` and values `[B, H, L,
            d_v]` per layer, in the compute dtype, and the source padding mask
            with each layer's projected cross-attention keys and values.
        """
        batch_size = ops.shape(encoder_output)[0]
        self_caches = []
        cross_caches = []
        for block in self.decoder_blocks:
            attention = block.self_attention
            heads, dtype = attention.num_heads, attention.compute_dtype
            # [B, H, L, d_k] and [B, H, L, d_v]
            self_caches.append(
                (
                    ops.zeros(
                        (batch_size, heads, max_length, attention.key_dim), dtype
                    ),
                    ops.zeros(
                        (batch_size, heads, max_length, attention.value_dim), dtype
                    ),
                )
            )
            # [B, S, D] -> [B, H, S, d_k] and [B, H, S, d_v]
            cross_caches.append(block.cross_attention.compute_cache(encoder_output))
        encoder_cache = {
            "source_padding_mask": ops.cast(source_padding_mask, "bool"),
            "cross_attention": cross_caches,
        }
        encoder_cache.update(self._pointer_cache(source_ids, encoder_output))
        return self_caches, encoder_cache

    def decode_step(
        self,
        target_ids,
        index,
        self_caches,
        encoder_cache,
        num_beams=None,
        share_beam_cache=False,
        self_attention_mask=None,
        training=False,
        return_attention_scores=False,
        next_word_index=None,
    ):
        """Runs the decoder on new target positions, updating the self caches.

        Args:
            target_ids: int tensor `[B, t]`, the tokens at positions
                `index .. index + t - 1` (usually t = 1); `[B*K, t]` with
                `num_beams`, the K beams of a sentence next to each other.
            index: int or scalar int tensor, the position of `target_ids[:, 0]`.
            self_caches: the self-attention caches of `init_cache` (or of the
                previous step).
            encoder_cache: the encoder cache of `init_cache`.
            num_beams: optional int K: `target_ids` has K rows per row of
                `encoder_cache` (beam search). `None` or 1: one each.
            share_beam_cache: bool, with `num_beams`: `self_caches` too has one
                row per sentence, slot `p * K + k` holding position p of beam
                row k (`init_cache` for `T * K` slots), read through
                `self_attention_mask`. `False`: one row per beam row. Defaults
                to `False`.
            self_attention_mask: optional bool tensor replacing the causal mask
                of every self-attention layer; with `share_beam_cache`, the
                `[B, K * t, T * K]` slots each beam row attends to (see
                `CachedMultiHeadAttention`).
            training: bool. Whether dropout is active. Defaults to `False`.
            return_attention_scores: bool. Also return the attention weights of
                the new positions. Defaults to `False`.
            next_word_index: int tensor `[B, t]` (`[B*K, t]` with
                `num_beams`): with the next-word pointer (and only then), the
                word each new position points at, from
                `NextWordPointer.next_word_index(target_ids, words_before)`
                with the row's word symbols before the chunk.

        Returns:
            A tuple `(logits [B, t, V] float32, updated self_caches)`; with
            `return_attention_scores` a third item `{"decoder": [B, H, t, L]
            per layer (zero on the slots after the new positions), "cross":
            [B, H, t, S] per layer}`.
        """
        pointer = self._cached_pointer(encoder_cache, next_word_index, num_beams)
        return self._decode(
            target_ids,
            **pointer,
            encoder_padding_mask=encoder_cache["source_padding_mask"],
            self_caches=self_caches,
            cross_caches=encoder_cache["cross_attention"],
            index=index,
            self_attention_mask=self_attention_mask,
            num_beams=num_beams,
            share_beam_cache=share_beam_cache,
            training=training,
            return_attention_scores=return_attention_scores,
        )
