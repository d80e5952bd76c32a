"""A generated parsing task: does the decoder know which word it is at?

Sentences are 4-8 words of two classes (`a0`..`a4` and `b0`..`b4`); the
tree groups each maximal run of one class into a constituent (`AP` or `BP`)
under `S`. Where a bracket closes depends only on the class of the next word
to cover, which a decoder without the next-word pointer (`NextWordPointer`)
has to find by attention, counting the words it has covered. Trees are
linearized and scored with the package's own code (`pipelines.linearize`,
`delinearize`, the EVALB-compatible scorer), the search is the bracket-
constrained greedy search of the parsing recipes.
"""

import keras
import numpy as np

import pipelines
from keras_transformer.decoding import DecodingConfig, translate
from keras_transformer.evaluation import evalb
from keras_transformer.models.builder import build_transformer
from keras_transformer.parsing.tree_constraint import parser_constraint
from keras_transformer.transformer_config import TransformerConfig

PAD_ID, BOS_ID, EOS_ID = 0, 2, 3
WORDS = [f"a{i}" for i in range(5)] + [f"b{i}" for i in range(5)]
SOURCE_IDS = {word: 4 + i for i, word in enumerate(WORDS)}  # one piece each
SYMBOLS = ["<pad>", "<unk>", "<s>", "</s>", "(AP", "(BP", "(S", ")AP", ")BP", ")S"]
SYMBOLS.append("XX")
TARGET_IDS = {symbol: i for i, symbol in enumerate(SYMBOLS)}
MAX_WORDS = 8
MAX_SYMBOLS = MAX_WORDS * 3 + 2  # a run per word at most, S, then eos


def toy_tree(words):
    """`(TOP (S (AP (A a1) (A a0)) (BP (B b3)) ...))`: runs of a class."""
    runs = []
    for word in words:
        if runs and runs[-1][0] == word[0]:
            runs[-1][1].append(word)
        else:
            runs.append((word[0], [word]))
    constituents = tuple(
        pipelines.Tree(
            f"{kind.upper()}P",
            tuple(pipelines.Tree(kind.upper(), (word,)) for word in run),
        )
        for kind, run in runs
    )
    return pipelines.Tree("TOP", (pipelines.Tree("S", constituents),))


def make_toy_trees(count, seed):
    rng = np.random.default_rng(seed)
    return [
        toy_tree(list(rng.choice(WORDS, rng.integers(4, MAX_WORDS + 1))))
        for _ in range(count)
    ]


def toy_arrays(trees):
    """`(source [N, 8], decoder_input [N, 27], target [N, 27])`, pad 0."""
    source = np.zeros((len(trees), MAX_WORDS), "int32")
    decoder_input = np.zeros((len(trees), MAX_SYMBOLS + 1), "int32")
    target = np.zeros_like(decoder_input)
    for i, tree in enumerate(trees):
        words, symbols = pipelines.linearize(tree)
        ids = [TARGET_IDS[symbol] for symbol in symbols]
        source[i, : len(words)] = [SOURCE_IDS[word] for word in words]
        decoder_input[i, : len(ids) + 1] = [BOS_ID, *ids]
        target[i, : len(ids) + 1] = [*ids, EOS_ID]
    return source, decoder_input, target


class _Vocabulary:
    vocabulary = SYMBOLS


def train_toy_parser(next_word_pointer, updates=300, seed=0):
    """A 1-layer parser trained for `updates` steps of 32 trees; returns
    `(model, test F1 on 100 new trees)`."""
    keras.utils.set_random_seed(seed)
    model = build_transformer(
        TransformerConfig(
            num_layers=1,
            d_model=32,
            d_ff=64,
            num_heads=2,
            dropout=0.0,
            source_vocab_size=len(WORDS) + 4,
            target_vocab_size=len(SYMBOLS),
            shared_embeddings=False,
            max_position_length=MAX_SYMBOLS + 1,
            next_word_pointer=next_word_pointer,
        )
    )
    if next_word_pointer:
        leaves, _, _ = pipelines.symbol_classes(SYMBOLS)
        model.set_word_vocabularies(list(SOURCE_IDS.values()), leaves)
    model.compile(
        optimizer=keras.optimizers.Adam(3e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, ignore_class=PAD_ID
        ),
    )
    model.optimizer.build(model.trainable_variables)
    source, decoder_input, target = toy_arrays(make_toy_trees(updates * 32, seed))
    model.fit(
        {"source_ids": source, "target_ids": decoder_input},
        target,
        batch_size=32,
        epochs=1,
        verbose=0,
        shuffle=False,
    )
    gold = make_toy_trees(100, seed + 1)
    test_source, _, _ = toy_arrays(gold)
    counts = np.array([len(tree.words()) for tree in gold], "int32")
    ids, _ = translate(
        model,
        test_source,
        DecodingConfig(method="greedy", constrain_brackets=True, match_brackets=True),
        max_length=MAX_SYMBOLS + 1,
        constraint=parser_constraint(
            _Vocabulary, len(SYMBOLS), tags=False, match_brackets=True
        ),
        word_counts=counts,
    )
    parsed = []
    for row, tree in zip(np.asarray(ids)[:, 0], gold, strict=True):
        symbols = [SYMBOLS[i] for i in row if i not in (PAD_ID, EOS_ID)]
        parsed.append(str(pipelines.delinearize(symbols, tree.words())[0]))
    result = evalb([str(tree) for tree in gold], parsed)
    return model, result.all.f_measure
