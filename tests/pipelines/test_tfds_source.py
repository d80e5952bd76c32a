import pytest
import tensorflow_datasets as tfds

from pipelines import load_tfds


@pytest.mark.parametrize("config, target", [("de-en", "de"), ("fr-en", "fr")])
def test_wmt14_mock(config, target):
    with tfds.testing.mock_data(num_examples=7):
        dataset = load_tfds(
            f"wmt14_translate/{config}", split="validation", target_language=target
        )
        pairs = list(dataset.as_numpy_iterator())
    assert len(pairs) == 7
    assert all(isinstance(s, bytes) and isinstance(t, bytes) for s, t in pairs)


def test_unknown_language():
    with tfds.testing.mock_data(num_examples=2):
        with pytest.raises(ValueError, match="target_language='fr'"):
            load_tfds("wmt14_translate/de-en", target_language="fr")
