"""Random sampling over a model-agnostic `symbols_to_logits_fn`, with a
temperature and optional top-k truncation (not in the paper, which decodes with
beam search; useful for back-translation and diverse outputs)."""

import keras
from keras import ops

from keras_transformer.decoding.beam_utils import take_per_row
from keras_transformer.decoding.token_by_token_search import token_by_token_search


def sampling_search(
    symbols_to_logits_fn,
    initial_ids,
    initial_cache,
    eos_id,
    max_length,
    temperature=1.0,
    top_k=0,
    seed=None,
    pad_id=0,
    max_lengths=None,
):
    """Decodes by sampling each token from the model's (reshaped) distribution.

    Each step samples from `softmax(logits / temperature)`, restricted to the
    `top_k` most probable tokens when `top_k > 0`. The random numbers (one
    uniform per sentence and step) are drawn before the loop and each token is
    found by inverting the cumulative distribution, so the loop body holds no
    random state: it traces into a `tf.function`, compiles with XLA and runs
    under `jax.jit`, and a fixed `seed` gives the same output on every path.

    Args:
        symbols_to_logits_fn: `fn(ids [B, 1], index, cache) -> (logits [B, 1, V]
            or [B, V], cache)`, as for `greedy_search`.
        initial_ids: int tensor `[B]`, usually bos.
        initial_cache: the cache before the first step (batch first).
        eos_id: int. End of sentence.
        max_length: int. Number of tokens to decode at most (buffer size).
        temperature: float > 0. Divides the logits; below 1 sharpens, above 1
            flattens the distribution. Defaults to `1.0`.
        top_k: int >= 0. Sample among the `top_k` most probable tokens only; 0
            samples from the whole vocabulary. Defaults to `0`.
        seed: int, `keras.random.SeedGenerator` or `None`. Defaults to `None`.
        pad_id: int. Written after eos. Defaults to `0`.
        max_lengths: optional int tensor `[B]`, the most tokens each sentence
            may generate. Defaults to `max_length` for every sentence.

    Returns:
        A tuple `(ids, log_probs)`: int32 `[B, max_length]` tokens (eos
        included, then padding) and float32 `[B]` `log P(y | x)` of the sampled
        tokens under the model (temperature 1, no truncation).
    """
    if temperature <= 0:
        raise ValueError(
            f"`temperature` must be positive. Received: temperature={temperature}"
        )
    if not isinstance(top_k, int) or top_k < 0:
        raise ValueError(f"`top_k` must be an integer >= 0. Received: top_k={top_k}")
    batch_size = ops.shape(initial_ids)[0]
    # [T, B], one uniform number per step and sentence, drawn before the loop
    uniforms = keras.random.uniform((max_length, batch_size), seed=seed)

    def choose(logits, index):
        if top_k:
            # [B, V] -> [B, k], the candidates and their vocabulary ids
            candidate_logits, candidate_ids = ops.top_k(logits, top_k)
        else:
            candidate_logits, candidate_ids = logits, None
        if top_k == 1:
            picks = ops.zeros((batch_size,), "int32")
        else:
            probs = ops.softmax(candidate_logits / temperature, axis=-1)
            # [B, k] -> [B]: the first candidate whose cumulative probability
            # exceeds the uniform number (inverse-CDF sampling)
            u = ops.expand_dims(ops.take(uniforms, index, axis=0), 1)
            below = ops.less(ops.cumsum(probs, axis=-1), u)
            picks = ops.sum(ops.cast(below, "int32"), axis=1)
            picks = ops.minimum(picks, ops.shape(probs)[-1] - 1)
        if candidate_ids is None:
            return picks
        return take_per_row(candidate_ids, ops.expand_dims(picks, 1))[:, 0]

    return token_by_token_search(
        symbols_to_logits_fn,
        initial_ids,
        initial_cache,
        choose,
        eos_id=eos_id,
        max_length=max_length,
        pad_id=pad_id,
        max_lengths=max_lengths,
    )
