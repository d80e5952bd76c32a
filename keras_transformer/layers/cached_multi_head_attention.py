"""Multi-head attention with a key/value cache (paper §3.2)."""

import contextlib
import threading

import keras
from keras import ops

from keras_transformer.layers.beam_layout import (
    fold_beams,
    heads_first,
    interleave_beams,
    unfold_beams,
)
from keras_transformer.layers.hash_dropout import HashDropout
from keras_transformer.layers.layer_utils import project
from keras_transformer.layers.masked_softmax import masked_softmax
from keras_transformer.validation import check_positive_int


@keras.saving.register_keras_serializable(package="keras_transformer")
class CachedMultiHeadAttention(keras.layers.MultiHeadAttention):
    """Multi-head scaled dot-product attention with a key/value cache.

    Implements paper §3.2, Eq. (1) and the multi-head projection of §3.2.2:

        Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V
        MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O,
        head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)

    It reuses every projection and the masked softmax of
    `keras.layers.MultiHeadAttention` (`key_dim` is d_k, `value_dim` is d_v,
    set independently as in Table 3 rows A and B; its dropout becomes a
    `HashDropout`, the same dropout with cheaper random bits) and adds a cache
    for incremental decoding. A cache is a tuple `(key_cache, value_cache)` of
    projected keys `[B, H, S, d_k]` and values `[B, H, S, d_v]`, heads first:
    the layout of the batched matmuls `Q K^T` and `softmax(.) V`, so decoding
    steps never transpose the cache (Keras' einsum path copied the whole cache
    into that layout twice per step). Keeping keys and values as two tensors (rather
    than one stacked tensor) is what allows d_k != d_v.

    Three modes, as keras-hub's `CachedMultiHeadAttention`, plus beam rows:

    - `cache=None`: plain attention over `query`, `value` (and `key`).
    - `cache` given, `cache_update_index=None`: the cache is read as is, and
      `key`/`value` are not projected. This serves cross-attention, whose keys
      and values (the encoder output, projected once by `compute_cache`) do not
      change while decoding.
    - `cache` and `cache_update_index` given: the projected keys and values of
      the new positions are written into the cache at `cache_update_index`
      before attending (decoder self-attention, one or more steps at a time).

    With `num_beams=K` (beam search, paper §6.1) the query has K rows per
    cache row: rows `b*K .. b*K + K - 1` are the K beams of sentence b, which
    attend to cache row b as K * T query positions (the same scores as K
    tiled copies of the cache, reading it once). On a read-only cache,
    `attention_mask` has the cache's batch size (one row per sentence,
    `[B, T, S]`). With `cache_update_index` (the beam-shared self-attention
    cache) the cache holds S * K slots per sentence, slot `p * K + k` for
    position p of beam row k; new positions are written at
    `cache_update_index * K`, and `attention_mask` `[B, K * T, S * K]` (beam
    k's query t in row `k * T + t`) says which slots each beam's history is
    made of. Beams then never move their cache: a reordering only changes
    the masks. Without `num_beams` the query and the cache have the same
    batch size.

    Args:
        num_heads: int. Number of attention heads h.
        key_dim: int. Size of each head for query and key, d_k.
        value_dim: int. Size of each head for value, d_v. Defaults to `key_dim`.
        **kwargs: every other argument of `keras.layers.MultiHeadAttention`.

    Call arguments:
        query: tensor `[B, T, D]` (`[B*K, T, D]` with `num_beams`).
        value: tensor `[B, S, D]`.
        key: optional tensor `[B, S, D]`. Defaults to `value`.
        attention_mask: optional bool tensor `[B, T, S]`, `True` where a query
            may attend. With a self-attention cache, S is the cache length
            (and the beam-shared cache's mask is `[B, K * T, S]`, see above).
        cache: optional tuple `(key_cache, value_cache)`, see above.
        cache_update_index: optional int or scalar int tensor.
        num_beams: optional int K >= 1, with `cache`: the query rows per cache
            row (see above). `None` or 1: one query row per cache row.
        training: bool. Whether attention dropout is active.
        return_attention_scores: bool. Also return the attention weights
            `[B, H, T, S]` (`[B*K, H, T, S]` with `num_beams`).
        attention_bias: optional float tensor `[B, H, T, S]` added to the
            scaled scores `Q K^T / sqrt(d_k)` before the softmax (not in the
            paper: the next-word pointer's distance bias, parsing). With
            `num_beams`, `[B, H, K * T, S]`: beam k's query t in row
            `k * T + t`, over the cache row of its sentence.

    Returns:
        `attention_output` `[B, T, D]`; then the attention weights if
        `return_attention_scores`; then the updated cache if `cache` was given.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §3.2.1-3.2.3 (Eq. 1).

    Examples:
        >>> layer = CachedMultiHeadAttention(num_heads=2, key_dim=4)
        >>> x = keras.random.normal((1, 3, 8))
        >>> layer(x, x).shape
        (1, 3, 8)
    """

    def call(
        self,
        query,
        value,
        key=None,
        attention_mask=None,
        cache=None,
        cache_update_index=None,
        num_beams=None,
        training=None,
        return_attention_scores=False,
        attention_bias=None,
    ):
        if key is None:
            key = value
        beams = _check_cache_arguments(query, cache, cache_update_index, num_beams)
        # [B, T, D] -> [B, H, T, d_k]
        query = heads_first(project(self._query_dense, query, 1))
        if cache is None:
            # [B, S, D] -> [B, H, S, d_k] and [B, H, S, d_v]
            key = heads_first(project(self._key_dense, key, 1))
            value = heads_first(project(self._value_dense, value, 1))
        else:
            key_cache, value_cache = cache
            if cache_update_index is not None:
                # [B, T, D] -> [B, H, T, d]
                new_keys = heads_first(project(self._key_dense, key, 1))
                new_values = heads_first(project(self._value_dense, value, 1))
                start = cache_update_index
                if beams is not None:
                    # Beam-shared cache: slot p * K + k holds position p of
                    # beam row k. [B*K, H, T, d] -> [B, H, T*K, d]
                    new_keys = interleave_beams(new_keys, beams)
                    new_values = interleave_beams(new_values, beams)
                    start = cache_update_index * beams
                key_cache = _write_cache(key_cache, start, new_keys)
                value_cache = _write_cache(value_cache, start, new_values)
            key, value = key_cache, value_cache
            cache = (key_cache, value_cache)

        if beams is not None:
            # The K beam rows of a sentence become K * T query positions over
            # its one cache row. A self-attention mask is per beam row already
            # ([B, K*T, S]); a cross-attention one is per sentence ([B, T, S])
            # and tiled.
            query, attention_mask = fold_beams(
                query,
                attention_mask,
                beams,
                tile_mask=cache_update_index is None,
            )
        attention_output, attention_scores = self._compute_attention(
            query,
            key,
            value,
            attention_mask=attention_mask,
            training=training,
            return_attention_scores=return_attention_scores,
            attention_bias=attention_bias,
        )
        if beams is not None:
            attention_output = unfold_beams(attention_output, beams)
            if return_attention_scores:
                attention_scores = unfold_beams(attention_scores, beams)
        # [B, H, T, d_v] -> [B, T, H, d_v] -> [B, T, D]
        attention_output = project(
            self._output_dense, ops.transpose(attention_output, (0, 2, 1, 3)), 2
        )

        outputs = (attention_output,)
        if return_attention_scores:
            outputs += (attention_scores,)
        if cache is not None:
            outputs += (cache,)
        return outputs[0] if len(outputs) == 1 else outputs

    def _build_attention(self, rank):
        """The parent's attention pieces, with a `HashDropout` on the weights.

        Same rate and seed as the parent's `keras.layers.Dropout`, which it
        replaces (and untracks, so the layer keeps one seed generator).

        The untracking goes through Keras' tracker, not `self._layers.remove`:
        the tracker also remembers the `id()` of every layer it stored, and a
        stale id made it skip whichever new layer Python placed at the freed
        address. That was the `attention_output` projection built next, at
        random: its weights were then missing from `model.weights` (not
        trained, not saved).
        """
        super()._build_attention(rank)
        keras_dropout = self._dropout_layer
        self._dropout_layer = HashDropout(
            rate=self._dropout, dtype=self.dtype_policy, seed=self.seed
        )
        self._tracker.untrack(keras_dropout)

    def _compute_attention(
        self,
        query,
        key,
        value,
        attention_mask=None,
        training=None,
        return_attention_scores=False,
        attention_bias=None,
    ):
        """softmax(Q K^T / sqrt(d_k) + bias) V on heads-first tensors, as
        batched matmuls.

        Args:
            query: `[B, H, T, d_k]`.
            key: `[B, H, S, d_k]`.
            value: `[B, H, S, d_v]`.
            attention_mask: optional bool `[B, T, S]`.
            attention_bias: optional `[B, H, T, S]`, added to the scores.

        Returns:
            `([B, H, T, d_v], [B, H, T, S] weights or None)`.
        """
        query = ops.multiply(query, ops.cast(self._inverse_sqrt_key_dim, query.dtype))
        # [B, H, T, d_k] x [B, H, d_k, S] -> [B, H, T, S]
        scores = ops.matmul(query, ops.swapaxes(key, -1, -2))
        if attention_bias is not None:
            scores = scores + ops.cast(attention_bias, scores.dtype)
        if attention_mask is None:
            weights = self._masked_softmax(scores)
        else:
            # [B, T, S] -> [B, 1, T, S]: one mask for every head.
            weights = masked_softmax(scores, ops.expand_dims(attention_mask, 1))
        dropped = weights
        if self._dropout > 0.0:
            dropped = self._dropout_layer(weights, training=training)
        # [B, H, T, S] x [B, H, S, d_v] -> [B, H, T, d_v]
        attention_output = ops.matmul(dropped, value)
        return attention_output, (weights if return_attention_scores else None)

    def compute_cache(self, value, key=None):
        """Projects keys and values once, for a read-only (cross-attention) cache.

        Args:
            value: tensor `[B, S, D]`.
            key: optional tensor `[B, S, D]`. Defaults to `value`.

        Returns:
            A tuple `(key_cache [B, H, S, d_k], value_cache [B, H, S, d_v])`.
        """
        key = value if key is None else key
        return (
            heads_first(project(self._key_dense, key, 1)),
            heads_first(project(self._value_dense, value, 1)),
        )

    def compute_output_spec(
        self,
        query,
        value,
        key=None,
        attention_mask=None,
        cache=None,
        cache_update_index=None,
        num_beams=None,
        training=None,
        return_attention_scores=False,
    ):
        key_shape = None if key is None else key.shape
        output_shape = self.compute_output_shape(query.shape, value.shape, key_shape)
        outputs = (keras.KerasTensor(output_shape, dtype=self.compute_dtype),)
        if return_attention_scores:
            key_length = value.shape[1] if cache is None else cache[0].shape[2]
            scores_shape = (query.shape[0], self.num_heads, query.shape[1], key_length)
            outputs += (keras.KerasTensor(scores_shape, dtype=self.compute_dtype),)
        if cache is not None:
            outputs += (
                tuple(keras.KerasTensor(c.shape, dtype=c.dtype) for c in cache),
            )
        return outputs[0] if len(outputs) == 1 else outputs


_CACHE_WRITER = threading.local()


@contextlib.contextmanager
def cache_writer(write_fn):
    """`CachedMultiHeadAttention` writes its caches with `write_fn` in the block.

    By default a layer writes the new keys and values into a self-attention
    cache with `keras.ops.slice_update`, which returns a new tensor. A
    search that owns its caches (they are read by nobody else) may supply a
    writer that updates them in place: `decoding.in_place_cache` does for
    TensorFlow graph mode, where `slice_update` copies the whole cache at
    every step (BUILD_NOTES.md, "Decoding"). The writer is read while the
    layer is traced, in the tracing thread.

    Args:
        write_fn: `fn(cache [B, H, S, d], start, updates [B, H, t, d]) -> cache`
            with `updates` written at positions `start .. start + t - 1`.
    """
    previous = getattr(_CACHE_WRITER, "write_fn", None)
    _CACHE_WRITER.write_fn = write_fn
    try:
        yield
    finally:
        _CACHE_WRITER.write_fn = previous


def _write_cache(cache, start, updates):
    """`updates` `[B, H, t, d]` written into `cache` at position `start`."""
    write_fn = getattr(_CACHE_WRITER, "write_fn", None)
    if write_fn is None:
        return ops.slice_update(cache, [0, 0, start, 0], updates)
    return write_fn(cache, start, updates)


def _check_cache_arguments(query, cache, cache_update_index, num_beams):
    """Validates the cache arguments; returns K to fold, or `None` (no beams).

    `num_beams` of `None` or 1 means one query row per cache row: nothing to
    fold. The query batch must be K times the cache batch where both are
    static (one row per beam, the K beams of a sentence next to each other).
    """
    if cache is None:
        if cache_update_index is not None or num_beams is not None:
            raise ValueError(
                "`cache_update_index` and `num_beams` need a `cache`. Received: "
                f"cache=None, cache_update_index={cache_update_index}, "
                f"num_beams={num_beams}"
            )
        return None
    if num_beams is not None:
        check_positive_int("num_beams", num_beams)
    beams = num_beams or 1
    rows, cached = query.shape[0], cache[0].shape[0]
    if rows is not None and cached is not None and rows != cached * beams:
        raise ValueError(
            "The query batch must be `num_beams` times the cache batch (one row "
            f"per beam). Received: query rows={rows}, cache rows={cached}, "
            f"num_beams={num_beams}"
        )
    return None if beams == 1 else beams
