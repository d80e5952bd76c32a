"""Compiles a Transformer with the paper's optimiser, schedule and loss (§5.3, §5.4)."""

import keras

from keras_transformer.training.label_smoothed_cross_entropy import (
    LabelSmoothedCrossEntropy,
)
from keras_transformer.training.masked_token_accuracy import MaskedTokenAccuracy
from keras_transformer.training.perplexity import Perplexity
from keras_transformer.training.throughput import TargetTokens
from keras_transformer.training.transformer_schedule import TransformerSchedule


def compile_transformer(
    model,
    label_smoothing=0.1,
    warmup_steps=4000,
    learning_rate_scale=1.0,
    gradient_accumulation_steps=None,
    jit_compile="auto",
    pad_id=0,
    steps_per_execution=1,
    optimizer=None,
    loss_chunk_size=512,
):
    """`model.compile` with the training recipe of §5.3 and §5.4.

    Adam with beta_1 = 0.9, beta_2 = 0.98, epsilon = 1e-9 and the warmup /
    inverse-square-root `TransformerSchedule`; label-smoothed cross-entropy over
    real target tokens; masked token accuracy, perplexity and the count of real
    target tokens (for `ThroughputLogger`'s tokens/s) as metrics. Call it
    inside the distribution strategy's scope, like building the model.

    Gradient accumulation (Keras' `gradient_accumulation_steps`) applies one
    update every n batches, reaching the paper's ~25,000-token effective batch
    (§5.1) on fewer devices; the schedule then counts updates, as the paper's
    step numbers do. Mixed precision comes from the model's dtype policy;
    with `mixed_float16` Keras wraps the optimiser in a `LossScaleOptimizer`.

    Args:
        model: a `Transformer` (its `hidden_dim` is d_model for the schedule).
        label_smoothing: float. eps_ls. Defaults to `0.1`.
        warmup_steps: int. Defaults to `4000`.
        learning_rate_scale: float. Multiplies the schedule. Defaults to `1.0`.
        gradient_accumulation_steps: int or `None`. Batches per update.
        jit_compile: bool or `"auto"`. XLA compilation of the train step.
        pad_id: int. Defaults to `0`.
        steps_per_execution: int. Batches per compiled call. Defaults to `1`.
        optimizer: optional optimizer replacing the paper's Adam (for tests and
            experiments); the other arguments keep their meaning.
        loss_chunk_size: int or `None`. Target tokens per chunk of the
            fused pre-softmax projection and loss while training (see
            `LabelSmoothedCrossEntropy`): the `[B, T, V]` logits are never
            formed, which at `base` size saves most of 1.6 GB. `None`
            computes the loss on the model's logits. Defaults to `512`.

    The optimizer's variables (Adam's moments, the accumulators) are
    created here, in the caller's strategy scope, rather than in the first
    trace of the train step. Without an explicit strategy Keras defers them
    to that trace, and `tf.function` then traces the whole train step a
    second time once they exist (BUILD_NOTES.md, "Tests").

    Returns:
        The compiled model.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §5.3 and §5.4.
        - [Kingma & Ba, 2015. Adam: A Method for Stochastic Optimization](
          https://arxiv.org/abs/1412.6980).
        - [Szegedy et al., 2016. Rethinking the Inception Architecture for Computer
          Vision](https://arxiv.org/abs/1512.00567), §7 (label smoothing).
    """
    if optimizer is None:
        schedule = TransformerSchedule(
            model.hidden_dim, warmup_steps=warmup_steps, scale=learning_rate_scale
        )
        optimizer = keras.optimizers.Adam(
            learning_rate=schedule,
            beta_1=0.9,
            beta_2=0.98,
            epsilon=1e-9,
            gradient_accumulation_steps=gradient_accumulation_steps,
        )
    model.compile(
        optimizer=optimizer,
        loss=LabelSmoothedCrossEntropy(
            label_smoothing=label_smoothing, pad_id=pad_id, chunk_size=loss_chunk_size
        ),
        metrics=[
            MaskedTokenAccuracy(pad_id=pad_id),
            Perplexity(pad_id=pad_id),
            TargetTokens(pad_id=pad_id),
        ],
        jit_compile=jit_compile,
        steps_per_execution=steps_per_execution,
    )
    if model.built and model.trainable_variables:
        model.optimizer.build(model.trainable_variables)
    return model
