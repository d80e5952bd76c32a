import dataclasses
import math

import keras
import pytest

from keras_transformer.decoding import DecodingConfig


def test_defaults_are_the_papers():
    # §6.1: beam 4, alpha 0.6, output length up to input + 50.
    config = DecodingConfig()
    assert (config.method, config.beam_size, config.alpha) == ("beam", 4, 0.6)
    assert (config.max_extra_length, config.n_best) == (50, 1)
    assert config.num_hypotheses == 4
    # The exact search, pad out of the softmax (`import_marian` changes both).
    assert (config.early_stopping, config.pad_in_softmax) == ("exact", False)
    assert DecodingConfig(method="greedy").num_hypotheses == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.beam_size = 8


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"method": "nucleus"}, "method='nucleus'"),
        ({"beam_size": 0}, "beam_size=0"),
        ({"alpha": -1.0}, "alpha=-1.0"),
        ({"alpha": math.nan}, "alpha=nan"),
        ({"max_extra_length": -1}, "max_extra_length=-1"),
        ({"n_best": 5}, "n_best=5, beam_size=4"),
        ({"method": "greedy", "n_best": 2}, "n_best=2"),
        ({"temperature": 0.0}, "temperature=0.0"),
        ({"top_k": -2}, "top_k=-2"),
        ({"early_stopping": False}, "early_stopping=False"),
        ({"early_stopping": "never"}, "early_stopping='never'"),
        ({"pad_in_softmax": 1}, "pad_in_softmax=1"),
    ],
)
def test_bad_values_name_what_was_received(fields, message):
    with pytest.raises(ValueError, match=message):
        DecodingConfig(**fields)


def test_with_overrides_ignores_options_left_out():
    config = DecodingConfig(beam_size=6)
    assert config.with_overrides(beam_size=None, alpha=1.0) == DecodingConfig(
        beam_size=6, alpha=1.0
    )
    assert config.with_overrides() == config


def test_dict_round_trip_and_unknown_fields():
    config = DecodingConfig(beam_size=2, alpha=0.0, n_best=2, share_beam_cache=False)
    assert DecodingConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match="beems"):
        DecodingConfig.from_dict({**config.to_dict(), "beems": 3})


def test_tensor_values_are_left_to_the_graph():
    # The export replaces alpha and max_extra_length by per-request tensors;
    # they are checked in the graph, not here.
    config = dataclasses.replace(
        DecodingConfig(),
        alpha=keras.ops.convert_to_tensor(-1.0),
        max_extra_length=keras.ops.convert_to_tensor(-1),
    )
    assert config.beam_size == 4


def test_matched_brackets_refine_the_bracket_constraint():
    config = DecodingConfig(constrain_brackets=True, match_brackets=True)
    assert DecodingConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match="or match_brackets=False. Received: "):
        DecodingConfig(match_brackets=True)
    with pytest.raises(ValueError, match="Received: match_brackets=1"):
        DecodingConfig(constrain_brackets=True, match_brackets=1)
