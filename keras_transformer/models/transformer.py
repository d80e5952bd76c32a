"""The encoder-decoder Transformer as a functional Keras model (paper §3)."""

import inspect

import keras
from keras import ops

from keras_transformer.layers.attention_masks import padding_mask
from keras_transformer.layers.hash_dropout import HashDropout
from keras_transformer.layers.lean_layer_normalization import LeanLayerNormalization
from keras_transformer.layers.learned_position_embedding import (
    LearnedPositionEmbedding,
)
from keras_transformer.layers.scaled_reversible_embedding import (
    ScaledReversibleEmbedding,
)
from keras_transformer.layers.sinusoidal_position_encoding import (
    SinusoidalPositionEncoding,
)
from keras_transformer.layers.transformer_decoder_block import TransformerDecoderBlock
from keras_transformer.layers.transformer_encoder_block import TransformerEncoderBlock
from keras_transformer.models.attention_scores import AttentionScores
from keras_transformer.models.cached_decoding import CachedDecoding
from keras_transformer.models.chunked_loss_training import ChunkedLossTraining
from keras_transformer.models.parsing_inputs import ParsingInputs
from keras_transformer.models.special_ids import BOS_ID, EOS_ID, PAD_ID  # noqa: F401
from keras_transformer.validation import check_one_of, check_positive_int


@keras.saving.register_keras_serializable(package="keras_transformer")
class Transformer(
    AttentionScores, CachedDecoding, ChunkedLossTraining, ParsingInputs, keras.Model
):
    """The Transformer of Figure 1: encoder stack, decoder stack, tied softmax.

    A functional model `{"source_ids": [B, S], "target_ids": [B, T]} -> logits
    [B, T, V]` (float32 under any dtype policy). `target_ids` is the target
    shifted right (it starts with bos); id 0 is padding in both inputs and is
    masked: source padding in encoder self-attention and cross-attention, target
    padding (with the causal mask) in decoder self-attention.

    Embeddings (§3.4): token embeddings scaled by sqrt(d_model), plus positions
    (§3.5; sinusoidal, or learned as in Table 3 row E), then dropout P_drop
    (§5.4). With `shared_embeddings` the source embedding, the target embedding
    and the pre-softmax projection are one matrix (§3.4); without it, source and
    target have their own vocabularies, and the target embedding is tied to the
    softmax if `tie_output_embeddings`.

    Compiled with a loss that fuses the pre-softmax projection (as
    `compile_transformer` does by default), the training call stops at the
    decoder output and `compute_loss` projects it in chunks; see
    `ChunkedLossTraining`.

    For decoding, the same layers (and weights) are reachable as `encode`,
    `init_cache` and `decode_step` (`CachedDecoding`): encode once, then one
    cached decoder step (or a chunk of steps) at a time. See `init_cache` for
    the cache layout.

    Args:
        source_vocab_size: int. Source vocabulary size (the shared one with
            `shared_embeddings`).
        target_vocab_size: int. Target vocabulary V; default: the source's.
        num_layers: int. N, the number of decoder (and encoder) layers.
        num_encoder_layers: int. Encoder layers, if not N (not in the paper).
        hidden_dim: int. d_model.
        intermediate_dim: int. d_ff.
        num_heads: int. h.
        key_dim: int. d_k. Defaults to `hidden_dim // num_heads`.
        value_dim: int. d_v. Defaults to `hidden_dim // num_heads`.
        dropout: float. P_drop on embeddings and sub-layer outputs.
        attention_dropout: float. Dropout on attention weights.
        activation_dropout: float. Dropout inside the feed-forward networks.
        position_encoding: `"sinusoidal"` or `"learned"`.
        max_sequence_length: int. Positions of a learned position embedding.
        shared_embeddings: bool. One embedding for source and target.
        tie_output_embeddings: bool. Pre-softmax projection = target embedding.
        normalize_first: bool. Pre-norm blocks plus a final LayerNorm per stack.
        layer_norm_epsilon: float.
        activation: the feed-forward activation, `"relu"` (default, §3.3),
            `"gelu"` or `"swish"` (models imported from Marian).
        sinusoid_layout: `SinusoidalPositionEncoding`'s `layout`,
            `"interleaved"` (default) or `"halves"` (Marian's).
        scale_embeddings: bool. Scale the embeddings by sqrt(d_model) (§3.4).
            Defaults to `True`.
        output_bias: bool. A learned bias on the logits (Marian's
            `final_logits_bias`; not in the paper). Defaults to `False`.
        next_word_pointer: bool. Parsing (§6.3): add to each decoder input the
            projected encoder output at the next word to cover
            (`NextWordPointer`, not in the paper; its tables are set by
            `set_word_vocabularies`, as `train` does). Defaults to `False`.
        next_word_pooling: `NextWordPointer`'s pooling, `"first"` (default) or `"mean"`.
        next_word_window: int. `NextWordPointer`'s `distance_window` (a
            cross-attention bias by word distance from the next word); 0
            (default) is off.
        encoder_word_window: int W. With the pointer's mean pooling, a
            `WordDistanceBias` of window W, one table for every encoder
            layer, added to the encoder's self-attention scores (word
            distance from each piece's word); 0 (default) is off.
        dtype: dtype policy of every layer (e.g. `"mixed_bfloat16"`).
        **kwargs: `keras.Model` arguments (`name`, ...).

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §3 and Figure 1.
        - [Kasai et al., 2021. Deep Encoder, Shallow Decoder: Reevaluating
          Non-autoregressive Machine Translation](https://arxiv.org/abs/2006.10369)
          (`num_encoder_layers`, not in the paper).
        - [Liu, Zhu & Shi, 2018. Improving Sequence-to-Sequence Constituency Parsing](
          https://doi.org/10.1609/aaai.v32i1.11917), AAAI 2018 (`next_word_pointer`, not
          in the paper).

    Examples:
        >>> model = Transformer(source_vocab_size=20, num_layers=1, hidden_dim=8,
        ...                     intermediate_dim=16, num_heads=2)
        >>> ids = keras.ops.ones((2, 5), "int32")
        >>> model({"source_ids": ids, "target_ids": ids}).shape
        (2, 5, 20)
    """

    def __init__(
        self,
        source_vocab_size,
        target_vocab_size=None,
        num_layers=6,
        num_encoder_layers=None,
        hidden_dim=512,
        intermediate_dim=2048,
        num_heads=8,
        key_dim=None,
        value_dim=None,
        dropout=0.1,
        attention_dropout=0.0,
        activation_dropout=0.0,
        position_encoding="sinusoidal",
        max_sequence_length=256,
        shared_embeddings=True,
        tie_output_embeddings=True,
        normalize_first=False,
        layer_norm_epsilon=1e-6,
        activation="relu",
        sinusoid_layout="interleaved",
        scale_embeddings=True,
        output_bias=False,
        next_word_pointer=False,
        next_word_pooling="first",
        next_word_window=0,
        encoder_word_window=0,
        dtype=None,
        **kwargs,
    ):
        check_positive_int("source_vocab_size", source_vocab_size)
        check_positive_int("target_vocab_size", target_vocab_size, allow_none=True)
        check_positive_int("num_layers", num_layers)
        check_positive_int("num_encoder_layers", num_encoder_layers, allow_none=True)
        check_positive_int("hidden_dim", hidden_dim)
        check_one_of("position_encoding", position_encoding, ("sinusoidal", "learned"))
        if target_vocab_size is None:
            target_vocab_size = source_vocab_size
        if shared_embeddings and target_vocab_size != source_vocab_size:
            raise ValueError(
                "Shared embeddings need one vocabulary. Received: "
                f"source_vocab_size={source_vocab_size}, "
                f"target_vocab_size={target_vocab_size}"
            )

        # === Layers ===
        self.source_embedding = ScaledReversibleEmbedding(
            source_vocab_size,
            hidden_dim,
            tie_weights=tie_output_embeddings or not shared_embeddings,
            scale=scale_embeddings,
            output_bias=output_bias and shared_embeddings,
            dtype=dtype,
            name="shared_embedding" if shared_embeddings else "source_embedding",
        )
        if shared_embeddings:
            self.target_embedding = self.source_embedding
        else:
            self.target_embedding = ScaledReversibleEmbedding(
                target_vocab_size,
                hidden_dim,
                tie_weights=tie_output_embeddings,
                scale=scale_embeddings,
                output_bias=output_bias,
                dtype=dtype,
                name="target_embedding",
            )
        self.encoder_position = self._position_layer(
            position_encoding,
            max_sequence_length,
            sinusoid_layout,
            dtype,
            "encoder_position",
        )
        self.decoder_position = self._position_layer(
            position_encoding,
            max_sequence_length,
            sinusoid_layout,
            dtype,
            "decoder_position",
        )
        self.encoder_embedding_dropout = HashDropout(
            dropout, dtype=dtype, name="encoder_embedding_dropout"
        )
        self.decoder_embedding_dropout = HashDropout(
            dropout, dtype=dtype, name="decoder_embedding_dropout"
        )
        block_kwargs = dict(
            num_heads=num_heads,
            intermediate_dim=intermediate_dim,
            key_dim=key_dim,
            value_dim=value_dim,
            dropout=dropout,
            attention_dropout=attention_dropout,
            activation_dropout=activation_dropout,
            normalize_first=normalize_first,
            layer_norm_epsilon=layer_norm_epsilon,
            activation=activation,
            dtype=dtype,
        )
        self.encoder_blocks = [
            TransformerEncoderBlock(**block_kwargs, name=f"encoder_block_{i}")
            for i in range(num_encoder_layers or num_layers)
        ]
        self.decoder_blocks = [
            TransformerDecoderBlock(**block_kwargs, name=f"decoder_block_{i}")
            for i in range(num_layers)
        ]
        self.encoder_final_norm = self.decoder_final_norm = None
        if normalize_first:
            self.encoder_final_norm = LeanLayerNormalization(
                epsilon=layer_norm_epsilon, dtype=dtype, name="encoder_final_norm"
            )
            self.decoder_final_norm = LeanLayerNormalization(
                epsilon=layer_norm_epsilon, dtype=dtype, name="decoder_final_norm"
            )
        self._build_parsing_inputs(
            source_vocab_size,
            target_vocab_size,
            hidden_dim,
            num_heads,
            next_word_pointer,
            next_word_pooling,
            next_word_window,
            encoder_word_window,
            dtype,
        )

        # === Functional model ===
        source_ids = keras.Input(shape=(None,), dtype="int32", name="source_ids")
        target_ids = keras.Input(shape=(None,), dtype="int32", name="target_ids")
        encoder_output, source_mask = self._encode(source_ids)
        logits, _ = self._decode(
            target_ids,
            encoder_padding_mask=source_mask,
            encoder_output=encoder_output,
            target_padding_mask=padding_mask(target_ids, PAD_ID),
            **self._pointer(target_ids, source_ids, encoder_output),
        )
        super().__init__(
            inputs={"source_ids": source_ids, "target_ids": target_ids},
            outputs=logits,
            **kwargs,
        )
        if dtype is not None:
            # A functional model ignores `dtype`: set, `compute_dtype` and
            # `get_config` name the layers' policy rather than the global one.
            self.dtype_policy = keras.dtype_policies.get(dtype)

        # === Config ===
        self.source_vocab_size = source_vocab_size
        self.target_vocab_size = target_vocab_size
        self.num_layers = num_layers
        self.num_encoder_layers = num_encoder_layers
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.num_heads = num_heads
        self.key_dim = key_dim
        self.value_dim = value_dim
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.activation_dropout = activation_dropout
        self.position_encoding = position_encoding
        self.max_sequence_length = max_sequence_length
        self.shared_embeddings = shared_embeddings
        self.tie_output_embeddings = tie_output_embeddings
        self.normalize_first = normalize_first
        self.layer_norm_epsilon = layer_norm_epsilon
        self.activation = activation
        self.sinusoid_layout = sinusoid_layout
        self.scale_embeddings = scale_embeddings
        self.output_bias = output_bias
        self.next_word_pointer = next_word_pointer
        self.next_word_pooling = next_word_pooling
        self.next_word_window = next_word_window
        self.encoder_word_window = encoder_word_window

    @staticmethod
    def _position_layer(kind, max_sequence_length, layout, dtype, name):
        if kind == "learned":
            return LearnedPositionEmbedding(max_sequence_length, dtype=dtype, name=name)
        return SinusoidalPositionEncoding(layout=layout, dtype=dtype, name=name)

    def _encode(self, source_ids, training=None, return_attention_scores=False):
        source_mask = padding_mask(source_ids, PAD_ID)
        # [B, S] -> [B, S, D]; sqrt(d_model) scaling inside the embedding (§3.4)
        x = self.source_embedding(source_ids)
        x = x + self.encoder_position(x)
        x = self.encoder_embedding_dropout(x, training=training)
        # [B, H, S, S] or None, shared by the layers
        bias = self._encoder_attention_bias(source_ids)
        scores = []
        for block in self.encoder_blocks:
            x = block(
                x,
                padding_mask=source_mask,
                training=training,
                return_attention_scores=return_attention_scores,
                attention_bias=bias,
            )
            if return_attention_scores:
                # [B, H, S, S] per layer
                x, block_scores = x
                scores.append(block_scores)
        if self.encoder_final_norm is not None:
            x = self.encoder_final_norm(x)
        if return_attention_scores:
            return x, source_mask, scores
        return x, source_mask

    def _decode(
        self,
        target_ids,
        encoder_padding_mask,
        encoder_output=None,
        target_padding_mask=None,
        self_caches=None,
        cross_caches=None,
        index=None,
        self_attention_mask=None,
        num_beams=None,
        share_beam_cache=False,
        training=None,
        return_attention_scores=False,
        project=True,
        pointer=None,
        cross_attention_bias=None,
    ):
        """The decoder stack and the softmax projection, cached or not.

        Returns `(logits, new_self_caches)` (`[]` without `self_caches`), and
        with `return_attention_scores` a third item `{"decoder": [B, H, T,
        T_keys] per layer, "cross": [B, H, T, S] per layer}` (T_keys is the
        cache length in the cached path). With `project=False` the first item
        is the decoder output `[B, T, D]` before the pre-softmax projection.
        `pointer` is the next-word pointer's `[B, T, D]`, added to the
        embeddings, and `cross_attention_bias` its `attention_bias`, added to
        every cross-attention's scores (`NextWordPointer`).
        """
        start_index = 0 if index is None else index
        # [B, T] -> [B, T, D]
        x = self.target_embedding(target_ids)
        x = x + self.decoder_position(x, start_index=start_index)
        if pointer is not None:
            x = x + pointer
        x = self.decoder_embedding_dropout(x, training=training)
        new_caches = []
        scores = {"decoder": [], "cross": []}
        for i, block in enumerate(self.decoder_blocks):
            if self_caches is None:
                outputs = block(
                    x,
                    encoder_output,
                    decoder_padding_mask=target_padding_mask,
                    encoder_padding_mask=encoder_padding_mask,
                    training=training,
                    return_attention_scores=return_attention_scores,
                    cross_attention_bias=cross_attention_bias,
                )
            else:
                outputs = block(
                    x,
                    encoder_padding_mask=encoder_padding_mask,
                    self_attention_cache=self_caches[i],
                    self_attention_cache_update_index=index,
                    cross_attention_cache=cross_caches[i],
                    self_attention_mask=self_attention_mask,
                    num_beams=num_beams,
                    share_beam_cache=share_beam_cache,
                    training=training,
                    return_attention_scores=return_attention_scores,
                    cross_attention_bias=cross_attention_bias,
                )
            outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
            x = outputs.pop(0)
            if return_attention_scores:
                scores["decoder"].append(outputs.pop(0))
                scores["cross"].append(outputs.pop(0))
            if self_caches is not None:
                new_caches.append(outputs.pop(0))
        if self.decoder_final_norm is not None:
            x = self.decoder_final_norm(x)
        if not project:
            return x, new_caches
        # [B, T, D] -> [B, T, V], the tied pre-softmax projection (§3.4)
        logits = self.target_embedding(x, reverse=True)
        if return_attention_scores:
            return ops.cast(logits, "float32"), new_caches, scores
        return ops.cast(logits, "float32"), new_caches

    def _decoder_output(self, inputs, training=None):
        """The decoder stack's output `[B, T, D]`, before the projection."""
        encoder_output, source_mask = self._encode(
            inputs["source_ids"], training=training
        )
        decoder_output, _ = self._decode(
            inputs["target_ids"],
            encoder_padding_mask=source_mask,
            encoder_output=encoder_output,
            target_padding_mask=padding_mask(inputs["target_ids"], PAD_ID),
            training=training,
            project=False,
            **self._pointer(inputs["target_ids"], inputs["source_ids"], encoder_output),
        )
        return decoder_output

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "dtype": keras.dtype_policies.serialize(self.dtype_policy),
            **{field: getattr(self, field) for field in _config_fields()},
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        return cls(**config)


def _config_fields():
    """The constructor's arguments, each kept as an attribute: `get_config`."""
    parameters = inspect.signature(Transformer.__init__).parameters
    return [name for name in parameters if name not in ("self", "dtype", "kwargs")]
