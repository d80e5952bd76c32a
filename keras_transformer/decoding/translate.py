"""Glue between a `Transformer` and the search functions: encode once, then one
cached decoder step per token."""

from keras import ops

from keras_transformer.decoding.greedy_search import greedy_search


def greedy_translate(model, source_ids, bos_id, eos_id, max_length):
    """Greedy translation of a batch of token ids with the model's cached decoder.

    Args:
        model: a `Transformer`.
        source_ids: int tensor `[B, S]`, 0 for padding.
        bos_id: int. The first decoder input.
        eos_id: int. End of sentence.
        max_length: int. Tokens to decode at most (the paper uses source
            length + 50, §6.1).

    Returns:
        int tensor `[B, max_length]`: tokens, eos, then padding.
    """
    encoder_output, source_mask = model.encode(source_ids)
    cache = model.init_cache(encoder_output, source_mask, max_length)

    def symbols_to_logits_fn(ids, index, cache):
        return model.decode_step(ids, cache, index)

    batch_size = ops.shape(source_ids)[0]
    return greedy_search(
        symbols_to_logits_fn,
        ops.full((batch_size,), bos_id, dtype="int32"),
        cache,
        eos_id=eos_id,
        max_length=max_length,
    )
