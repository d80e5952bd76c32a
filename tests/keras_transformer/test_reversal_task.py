import dataclasses

import numpy as np

from tests.keras_transformer import reversal_task as toy_task


def test_reversal_data_layout():
    config = toy_task.ToyTaskConfig(min_length=2, max_length=4)
    source, decoder_input, target = toy_task.make_reversal_data(50, config, seed=0)
    assert source.shape == (50, 4) and target.shape == decoder_input.shape == (50, 5)
    for s, d, t in zip(source, decoder_input, target, strict=True):
        tokens = toy_task.strip(s)
        assert 2 <= len(tokens) <= 4 and min(tokens) >= toy_task.FIRST_TOKEN
        n = len(tokens)
        assert d[: n + 1].tolist() == [toy_task.BOS_ID, *tokens[::-1]]
        assert t[: n + 1].tolist() == [*tokens[::-1], toy_task.EOS_ID]
        assert not d[n + 1 :].any() and not t[n + 1 :].any()


def test_short_run_learns_and_reports():
    config = dataclasses.replace(
        toy_task.ToyTaskConfig(), train_examples=1280, epochs=2, test_examples=16
    )
    result = toy_task.run_toy_task(config, verbose=0)
    assert result["final_loss"] < np.log(config.vocab_size)  # below chance
    assert 0.0 <= result["exact_match"] <= 1.0
    assert len(result["examples"]) == 3


def test_strip_stops_at_eos_or_padding():
    assert toy_task.strip(np.array([5, 6, toy_task.EOS_ID, 7])) == [5, 6]
    assert toy_task.strip(np.array([5, 0, 0])) == [5]
