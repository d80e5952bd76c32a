import doctest

from pipelines import (
    BatchingConfig,
    SymbolTokenizer,
    decode_pairs,
    delinearize,
    encode_sources,
    load_bundled_trees,
    read_token_cache,
    retag,
    target_symbols,
    write_token_shard,
)
from pipelines.tokenizers.special_tokens import BOS_ID, EOS_ID
from pipelines.trees import tree_corpus
from pipelines.trees.tree_corpus import TreeCorpus


def test_docstring_example():
    assert doctest.testmod(tree_corpus).failed == 0


def test_trees_go_through_the_token_cache_and_come_back(tmp_path, sp_tokenizer):
    trees = load_bundled_trees("dev")[0]
    corpus = TreeCorpus(trees, "GUM dev")
    pairs = list(decode_pairs(corpus.raw_pairs(), corpus.origin, "fail"))
    assert len(pairs) == len(trees) == 438
    symbols = SymbolTokenizer(target_symbols(trees))
    config = BatchingConfig(max_train_length=256)
    path = str(tmp_path / "trees.tfrecord")
    counts = write_token_shard(
        pairs, sp_tokenizer, config, path, target_tokenizer=symbols
    )
    assert sum(counts.values()) == 438 and counts["kept"] > 400
    kept = [
        (number, words, linearized)
        for number, words, linearized in pairs
        if len(linearized.split()) + 1 <= 256
        and len(sp_tokenizer.tokenize(words).numpy()) + 1 <= 256
    ]
    cached = list(read_token_cache([path]).as_numpy_iterator())
    assert len(cached) == counts["kept"] == len(kept)
    for (number, words, linearized), (source, target_in, target_out) in zip(
        kept, cached, strict=True
    ):
        assert source.tolist() == encode_sources(sp_tokenizer, [words]).to_list()[0]
        assert target_in[0] == BOS_ID and target_out[-1] == EOS_ID
        text = symbols.detokenize([target_out[:-1].tolist()]).numpy()[0].decode()
        assert text == linearized
        tree = trees[number - 1]
        back, repairs = delinearize(text, words.split())
        assert repairs.total == 0
        assert retag(back, [p.label for p in tree.preterminals()]) == tree
