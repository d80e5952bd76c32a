"""What the encoder and decoder blocks share: arguments, sub-layers, residuals."""

import keras

from keras_transformer.layers.cached_multi_head_attention import (
    CachedMultiHeadAttention,
)
from keras_transformer.layers.hash_dropout import HashDropout
from keras_transformer.layers.layer_utils import clone_initializer, head_dims
from keras_transformer.layers.lean_layer_normalization import LeanLayerNormalization
from keras_transformer.layers.position_wise_feed_forward import (
    PositionWiseFeedForward,
)
from keras_transformer.validation import check_positive_int, check_rate


class TransformerBlockBase(keras.layers.Layer):
    """Base of `TransformerEncoderBlock` and `TransformerDecoderBlock`.

    Holds the constructor arguments both blocks take (documented on them), builds
    their sub-layers and applies the residual wrapping of paper §3.1 and §5.4:

        post-norm (the paper, default): x = LayerNorm(x + Dropout(Sublayer(x)))
        pre-norm (`normalize_first=True`): x = x + Dropout(Sublayer(LayerNorm(x)))

    Pre-norm is the variant later Transformer codebases (tensor2tensor v2,
    fairseq `--encoder-normalize-before`) train more stably; a pre-norm stack
    needs a final LayerNorm, which the model adds.
    """

    def __init__(
        self,
        num_heads,
        intermediate_dim,
        key_dim=None,
        value_dim=None,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        activation="relu",
        normalize_first=False,
        layer_norm_epsilon=1e-6,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int("num_heads", num_heads)
        check_positive_int("intermediate_dim", intermediate_dim)
        check_positive_int("key_dim", key_dim, allow_none=True)
        check_positive_int("value_dim", value_dim, allow_none=True)
        check_rate("dropout", dropout)
        check_rate("attention_dropout", attention_dropout)
        check_rate("activation_dropout", activation_dropout)
        self.num_heads = num_heads
        self.intermediate_dim = intermediate_dim
        self.key_dim = key_dim
        self.value_dim = value_dim
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.activation_dropout = activation_dropout
        self.activation = keras.activations.get(activation)
        self.normalize_first = normalize_first
        self.layer_norm_epsilon = layer_norm_epsilon
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)

    def _build_attention(self, name, query_shape, value_shape):
        """Builds `self.<name>` with its LayerNorm and residual dropout."""
        key_dim, value_dim = head_dims(
            query_shape[-1], self.num_heads, self.key_dim, self.value_dim
        )
        attention = CachedMultiHeadAttention(
            num_heads=self.num_heads,
            key_dim=key_dim,
            value_dim=value_dim,
            dropout=self.attention_dropout,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            bias_initializer=clone_initializer(self.bias_initializer),
            dtype=self.dtype_policy,
            name=name,
        )
        attention.build(query_shape, value_shape)
        setattr(self, name, attention)
        self._build_norm_and_dropout(name, query_shape)

    def _build_feed_forward(self, inputs_shape):
        """Builds `self.feed_forward` with its LayerNorm and residual dropout."""
        self.feed_forward = PositionWiseFeedForward(
            self.intermediate_dim,
            activation=self.activation,
            activation_dropout=self.activation_dropout,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            bias_initializer=clone_initializer(self.bias_initializer),
            dtype=self.dtype_policy,
            name="feed_forward",
        )
        self.feed_forward.build(inputs_shape)
        self._build_norm_and_dropout("feed_forward", inputs_shape)

    def _build_norm_and_dropout(self, sublayer, inputs_shape):
        norm = LeanLayerNormalization(
            epsilon=self.layer_norm_epsilon,
            dtype=self.dtype_policy,
            name=f"{sublayer}_norm",
        )
        norm.build(inputs_shape)
        setattr(self, f"{sublayer}_norm", norm)
        dropout = HashDropout(
            self.dropout, dtype=self.dtype_policy, name=f"{sublayer}_dropout"
        )
        setattr(self, f"{sublayer}_dropout", dropout)

    def _residual(self, sublayer, inputs, fn, training):
        """Wraps `fn` (x -> (y, extras)) in the §3.1 residual; returns (x, extras)."""
        norm = getattr(self, f"{sublayer}_norm")
        dropout = getattr(self, f"{sublayer}_dropout")
        x = norm(inputs) if self.normalize_first else inputs
        x, extras = fn(x)
        x = inputs + dropout(x, training=training)
        return (x if self.normalize_first else norm(x)), extras

    def _feed_forward_residual(self, inputs, training):
        def feed_forward(x):
            return self.feed_forward(x, training=training), None

        return self._residual("feed_forward", inputs, feed_forward, training)[0]

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_heads": self.num_heads,
                "intermediate_dim": self.intermediate_dim,
                "key_dim": self.key_dim,
                "value_dim": self.value_dim,
                "dropout": self.dropout,
                "attention_dropout": self.attention_dropout,
                "activation_dropout": self.activation_dropout,
                "activation": keras.activations.serialize(self.activation),
                "normalize_first": self.normalize_first,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "kernel_initializer": keras.initializers.serialize(
                    self.kernel_initializer
                ),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            }
        )
        return config


def split_attention_outputs(outputs, with_scores, with_cache):
    """Splits `CachedMultiHeadAttention` outputs into (output, (scores, cache))."""
    if not with_scores and not with_cache:
        return outputs, (None, None)
    outputs = list(outputs)
    scores = outputs.pop(1) if with_scores else None
    cache = outputs.pop(1) if with_cache else None
    return outputs[0], (scores, cache)
