"""A run's batching plan (§5.1): the recipe's effective batch split over
replicas and gradient accumulation steps, as the `BatchingConfig` the input
pipeline reads. The one owner of the plan: `prepare` (cache and filter report)
and `train` (batches and accumulation) both take it from here."""

import math

import pipelines
from keras_transformer.validation import check_positive_int


def plan_batches(recipe, num_replicas):
    """Splits the effective batch over replicas and accumulation steps (§5.1).

    Returns:
        `(tokens_per_step, accumulation_steps)`: the global token budget of one
        batch fed to `model.fit` and the number of batches per update, such
        that `tokens_per_step * accumulation_steps` is about
        `recipe.tokens_per_batch` and each replica holds at most
        `recipe.max_tokens_per_replica` tokens per side.
    """
    check_positive_int("num_replicas", num_replicas)
    per_step_limit = recipe.max_tokens_per_replica * num_replicas
    accumulation = max(1, math.ceil(recipe.tokens_per_batch / per_step_limit))
    return recipe.tokens_per_batch // accumulation, accumulation


def batching_config(recipe, tokens_per_batch, num_replicas=1, static=False):
    """The recipe's `BatchingConfig` for `tokens_per_batch` global tokens per
    batch (its length limits filter the run's tokenized cache, `prepare`).
    Training batches are `endless`: full batches, across passes."""
    return pipelines.BatchingConfig(
        endless=True,
        tokens_per_batch=tokens_per_batch,
        max_train_length=recipe.max_train_length,
        max_length_ratio=recipe.max_length_ratio,
        bucket_scale=recipe.bucket_scale,
        min_bucket_length=recipe.min_bucket_length,
        num_replicas=num_replicas,
        static_shapes=static,
        seed=recipe.seed,
    )


def batching_plan(recipe, num_replicas=1, static=False):
    """The batches of one run: `(BatchingConfig, accumulation_steps)`.

    Args:
        recipe: a `Recipe`.
        num_replicas: int. Replicas in sync. Defaults to `1`.
        static: bool. Static shapes (TPU, XLA). Defaults to `False`.
    """
    tokens_per_step, accumulation = plan_batches(recipe, num_replicas)
    config = batching_config(recipe, tokens_per_step, num_replicas, static)
    return config, accumulation
