import pytest

from pipelines import sample_texts


def test_all_and_sampled(fixture_pairs):
    everything = sample_texts(fixture_pairs)
    assert len(everything) == 600
    sample = sample_texts(fixture_pairs, max_pairs=50, seed=3)
    assert len(sample) == 100
    assert sample == sample_texts(fixture_pairs, max_pairs=50, seed=3)
    assert sample != sample_texts(fixture_pairs, max_pairs=50, seed=4)
    assert set(sample) <= set(everything)
    with pytest.raises(ValueError, match="max_pairs=0"):
        sample_texts(fixture_pairs, max_pairs=0)
