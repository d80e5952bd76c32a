import pytest

from pipelines import BUNDLED_CORPORA, bundled_corpus_path, load_bundled


def test_every_bundled_file_exists():
    for corpus, pairs in BUNDLED_CORPORA.items():
        for language_pair, splits in pairs.items():
            for split in splits:
                assert bundled_corpus_path(corpus, language_pair, split).is_file()


def test_fixture_has_300_pairs(fixture_pairs):
    pairs = list(fixture_pairs.as_numpy_iterator())
    assert len(pairs) == 300
    assert all(source and target for source, target in pairs)


def test_default_is_libreoffice_en_de_train():
    path = bundled_corpus_path()
    assert path.parent.name == "libreoffice_help"
    assert path.name == "en-de.train.tsv.gz"
    source, target = next(load_bundled(split="dev").as_numpy_iterator())
    assert source and target


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"corpus": "europarl"}, "corpus='europarl'"),
        ({"language_pair": "en-fr", "corpus": "ding"}, "language_pair='en-fr'"),
        ({"split": "valid"}, "split='valid'"),
    ],
)
def test_unknown_names(kwargs, message):
    with pytest.raises(ValueError, match=message):
        bundled_corpus_path(**kwargs)
