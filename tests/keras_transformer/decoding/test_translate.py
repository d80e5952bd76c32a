import dataclasses

import numpy as np

from keras_transformer import toy_task
from keras_transformer.decoding import greedy_translate


def test_cached_greedy_equals_uncached_recomputation():
    config = dataclasses.replace(
        toy_task.ToyTaskConfig(), train_examples=640, epochs=1, test_examples=8
    )
    model = toy_task.run_toy_task(config, verbose=0)["model"]
    source, _, _ = toy_task.make_reversal_data(6, config, seed=7)
    source[0, 4:] = 0  # a short, padded source in the batch
    max_length = config.max_length + 1
    cached = np.array(
        greedy_translate(model, source, toy_task.BOS_ID, toy_task.EOS_ID, max_length)
    )

    # Second path: re-run the full model on the whole prefix at every step.
    ids = np.full((6, 1), toy_task.BOS_ID, "int32")
    finished = np.zeros(6, bool)
    for _ in range(max_length):
        logits = np.array(model({"source_ids": source, "target_ids": ids}))[:, -1]
        next_ids = np.where(finished, 0, logits.argmax(-1)).astype("int32")
        finished |= next_ids == toy_task.EOS_ID
        ids = np.concatenate([ids, next_ids[:, None]], axis=1)
    np.testing.assert_array_equal(cached, ids[:, 1:])
    assert len(set(map(tuple, cached))) > 1  # not a degenerate constant output
