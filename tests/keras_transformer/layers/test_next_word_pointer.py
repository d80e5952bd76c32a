import keras
import numpy as np
import pytest

from keras_transformer.layers.next_word_pointer import NOT_WORD_IDS, NextWordPointer
from keras_transformer.models.special_ids import BOS_ID, EOS_ID, PAD_ID
from tests.layer_check import run_layer_check

# Source ids: 4..11 begin a word, 12..19 continue one (0-3 pad/unk/bos/eos).
SOURCE_VOCAB = 20
WORD_STARTS = list(range(4, 12))
# Target ids: 4 is the word symbol `XX`, 5..7 open and 8..10 close brackets.
TARGET_VOCAB = 12
XX, OPEN_S, OPEN_NP, CLOSE_NP = 4, 5, 6, 9
BOS = 2
HIDDEN = 4


@keras.saving.register_keras_serializable(package="tests")
class _PointerWithTables(NextWordPointer):
    """A `NextWordPointer` whose tables are set when it is built.

    The shared layer check builds the layer itself, and with its tables at
    their initial zeros every vector is zero: the fit step would change no
    weight. Here the check runs on the layer in use, tables set.
    """

    def build(self, *shapes):
        super().build(*shapes)
        self.set_vocabularies(WORD_STARTS, [XX])


def _pointer(hidden_dim=HIDDEN, pooling="first"):
    pointer = NextWordPointer(
        SOURCE_VOCAB, TARGET_VOCAB, hidden_dim=hidden_dim, pooling=pooling
    )
    pointer.set_vocabularies(WORD_STARTS, [XX])
    return pointer


def test_layer_check(tmp_path):
    # Source words: 3 in row 0 (one of 3 pieces, one of 2), 2 in row 1 with
    # padding; the targets point at words 0..3 (3 past row 1's last).
    run_layer_check(
        _PointerWithTables,
        {
            "source_vocab_size": SOURCE_VOCAB,
            "target_vocab_size": TARGET_VOCAB,
            "hidden_dim": HIDDEN,
        },
        {
            "target_ids": np.array(
                [[BOS, XX, OPEN_NP, XX, XX], [BOS, OPEN_S, XX, XX, XX]], "int32"
            ),
            "source_ids": np.array(
                [[5, 12, 13, 6, 7, 14], [8, 9, 15, 0, 0, 0]], "int32"
            ),
            "encoder_output": np.random.default_rng(0)
            .normal(size=(2, 6, HIDDEN))
            .astype("float32"),
        },
        expected_output_shape=(2, 5, HIDDEN),
        tmp_path=tmp_path,
    )


def test_config_keeps_the_sizes_and_pooling():
    config = NextWordPointer(
        SOURCE_VOCAB, TARGET_VOCAB, hidden_dim=8, pooling="mean"
    ).get_config()
    assert (
        config["source_vocab_size"],
        config["target_vocab_size"],
        config["hidden_dim"],
        config["pooling"],
    ) == (SOURCE_VOCAB, TARGET_VOCAB, 8, "mean")
    assert NextWordPointer.from_config(config).get_config() == config
    # A config saved before `pooling` (or the window) existed loads as the
    # first piece (and no bias).
    del config["pooling"], config["distance_window"], config["num_heads"]
    assert NextWordPointer.from_config(config).pooling == "first"
    assert NextWordPointer.from_config(config).distance_window == 0
    windowed = NextWordPointer(
        SOURCE_VOCAB,
        TARGET_VOCAB,
        hidden_dim=8,
        pooling="mean",
        distance_window=2,
        num_heads=4,
    ).get_config()
    assert (windowed["distance_window"], windowed["num_heads"]) == (2, 4)
    assert NextWordPointer.from_config(windowed).get_config() == windowed
    with pytest.raises(ValueError, match="Received: pooling='max'"):
        NextWordPointer(SOURCE_VOCAB, TARGET_VOCAB, hidden_dim=8, pooling="max")


def test_the_ids_of_no_word_are_the_models_special_ids():
    assert sorted(NOT_WORD_IDS) == sorted((PAD_ID, BOS_ID, EOS_ID))


def test_mean_pooling_numbers_every_piece_of_a_word_and_averages_them():
    pointer = _pointer(pooling="mean")
    source = np.array(
        [
            # a word of 3 pieces, a word of 1, a word of 2, eos, padding
            [5, 12, 13, 6, 7, 14, EOS_ID, 0],
            # a continuation piece first (a truncated word), a word of 3
            # pieces cut by the source's end
            [15, 9, 16, 17, 0, 0, 0, 0],
        ],
        "int32",
    )
    encoder_output = np.random.default_rng(4).normal(size=(2, 8, HIDDEN))
    memory, positions = pointer.memory(source, encoder_output.astype("float32"))
    assert np.asarray(positions).tolist() == [
        [0, 0, 0, 1, 2, 2, -1, -1],
        [-1, 0, 0, 0, -1, -1, -1, -1],
    ]
    index = np.array([[0, 1, 2, 3], [0, 1, 0, 2]], "int32")
    selected = np.asarray(pointer.select(memory, positions, index))
    # W h + b of each piece, with the projection's own weights
    kernel, bias = (np.asarray(w) for w in pointer.projection.weights)
    pieces = encoder_output @ kernel + bias
    zero = np.zeros(HIDDEN, "float32")
    expected = [
        [pieces[0, 0:3].mean(0), pieces[0, 3], pieces[0, 4:6].mean(0), zero],
        [pieces[1, 1:4].mean(0), zero, pieces[1, 1:4].mean(0), zero],
    ]
    np.testing.assert_allclose(selected, np.array(expected), rtol=1e-5, atol=1e-6)


def test_distance_bias_by_hand():
    # Window 1: table rows are distances -1, 0, +1 and "no word"; 2 heads.
    pointer = NextWordPointer(
        SOURCE_VOCAB,
        TARGET_VOCAB,
        hidden_dim=HIDDEN,
        pooling="mean",
        distance_window=1,
        num_heads=2,
    )
    pointer.set_vocabularies(WORD_STARTS, [XX])
    table = np.array([[1, 10], [2, 20], [3, 30], [4, 40]], "float32")
    pointer.distance_bias.table.assign(table)
    # words 0 (2 pieces), 1, 2; eos; padding
    source = np.array([[5, 12, 6, 7, EOS_ID, 0]], "int32")
    _, positions = pointer.memory(source, np.zeros((1, 6, HIDDEN), "float32"))
    # next words 0 and 2: distances [0 0 1 2 - -] and [-2 -2 -1 0 - -]
    bias = np.asarray(pointer.attention_bias(positions, np.array([[0, 2]])))
    rows = [[1, 1, 2, 2, 3, 3], [0, 0, 0, 1, 3, 3]]
    assert bias.shape == (1, 2, 2, 6)
    np.testing.assert_array_equal(bias[0], table[rows].transpose(2, 0, 1))
    # The teacher-forced call returns the same bias beside the vectors
    # (inputs bos, XX, XX point at words 0, 1, 2).
    selected, called = pointer(
        np.array([[BOS, XX, XX]], "int32"),
        source,
        np.zeros((1, 6, HIDDEN), "float32"),
    )
    assert selected.shape == (1, 3, HIDDEN)
    np.testing.assert_array_equal(
        np.asarray(called)[0, :, [0, 2]], bias[0].transpose(1, 0, 2)
    )
    # Beam rows (K=2 per sentence) fold as the attention folds its queries:
    # beam k's position j in row k*t + j.
    folded = np.asarray(
        pointer.attention_bias(positions, np.array([[0], [2]]), num_beams=2)
    )
    np.testing.assert_array_equal(folded, bias)
    # Without a window there is no bias.
    assert _pointer(pooling="mean").attention_bias(positions, [[0]]) is None


def test_next_word_index_counts_word_symbols_inclusively():
    pointer = _pointer()
    # [bos, (S, XX, (NP, XX, XX, )NP]: the input at j points past the word
    # symbols up to and including j.
    target = np.array(
        [
            [BOS, OPEN_S, XX, OPEN_NP, XX, XX, CLOSE_NP],
            [BOS, XX, XX, XX, CLOSE_NP, OPEN_NP, XX],
        ],
        "int32",
    )
    index = np.asarray(pointer.next_word_index(target))
    assert index.dtype == np.int32
    assert index.tolist() == [[0, 0, 1, 1, 2, 3, 3], [0, 1, 2, 3, 3, 3, 4]]
    # A chunk after 2 and 5 word symbols.
    index = np.asarray(pointer.next_word_index(target, words_before=np.array([2, 5])))
    assert index.tolist() == [[2, 2, 3, 3, 4, 5, 5], [5, 6, 7, 8, 8, 8, 9]]
    counts = np.asarray(pointer.word_symbol_counts(target))
    assert counts.tolist() == [3, 4]


def test_chunks_with_words_before_equal_the_whole_sequence():
    pointer = _pointer()
    target = np.random.default_rng(1).integers(2, TARGET_VOCAB, (3, 9))
    target[:, ::3] = XX
    whole = np.asarray(pointer.next_word_index(target))
    before = pointer.word_symbol_counts(target[:, :4])
    rest = np.asarray(pointer.next_word_index(target[:, 4:], words_before=before))
    np.testing.assert_array_equal(whole[:, 4:], rest)


def test_memory_numbers_the_word_initial_pieces():
    pointer = NextWordPointer(SOURCE_VOCAB, TARGET_VOCAB, hidden_dim=HIDDEN)
    # Padding id 0 in the list too: padding never starts a word. Unknown (1)
    # is a word of its own.
    pointer.set_vocabularies([0, 1, *WORD_STARTS], [XX])
    source = np.array(
        [
            # a word of 3 pieces, a word of 1, a word of 2, padding
            [5, 12, 13, 6, 7, 14, 0, 0],
            # a continuation piece first (a truncated word), unknown, padding
            [15, 1, 9, 16, 17, 0, 0, 0],
        ],
        "int32",
    )
    encoder_output = np.random.default_rng(0).normal(size=(2, 8, HIDDEN))
    projected, positions = pointer.memory(source, encoder_output.astype("float32"))
    positions = np.asarray(positions)
    assert positions.dtype == np.int32
    assert positions.tolist() == [
        [0, -1, -1, 1, 2, -1, -1, -1],
        [-1, 0, 1, -1, -1, -1, -1, -1],
    ]
    # W h + b with the projection's own weights.
    kernel, bias = (np.asarray(w) for w in pointer.projection.weights)
    np.testing.assert_allclose(
        np.asarray(projected), encoder_output @ kernel + bias, rtol=1e-5, atol=1e-6
    )


def test_select_returns_the_first_piece_of_the_next_word():
    pointer = _pointer()
    source = np.array([[5, 12, 13, 6, 7, 14, 0, 0], [8, 9, 15, 0, 0, 0, 0, 0]])
    encoder_output = np.random.default_rng(2).normal(size=(2, 8, HIDDEN))
    memory, positions = pointer.memory(source, encoder_output.astype("float32"))
    memory = np.asarray(memory)
    # Word numbers 0..5: row 0 has 3 words (first pieces at 0, 3, 4), row 1
    # 2 (at 0, 1).
    index = np.array([[0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 1, 0]], "int32")
    selected = np.asarray(pointer.select(memory, positions, index))
    assert selected.shape == (2, 6, HIDDEN)
    zero = np.zeros(HIDDEN, "float32")
    expected = [
        [memory[0, 0], memory[0, 3], memory[0, 4], zero, zero, zero],
        [memory[1, 0], memory[1, 1], zero, zero, memory[1, 1], memory[1, 0]],
    ]
    # A matmul with one 1 per row: the rows themselves.
    np.testing.assert_allclose(selected, np.array(expected), rtol=1e-6, atol=1e-7)

    # The call is memory, then select at the teacher-forced indices.
    target = np.array([[BOS, XX, XX, XX, XX], [BOS, OPEN_S, XX, XX, XX]], "int32")
    np.testing.assert_allclose(
        np.asarray(pointer(target, source, encoder_output.astype("float32"))),
        np.asarray(pointer.select(memory, positions, pointer.next_word_index(target))),
        rtol=1e-6,
    )


def test_a_truncated_source_points_at_nothing_past_its_last_word():
    pointer = _pointer()
    # Four words: at 0 (3 pieces), 3, 4 (2 pieces) and 6; cut after piece 4,
    # in the middle of word 2.
    source = np.array([[5, 12, 13, 6, 7, 14, 8, 16]], "int32")
    encoder_output = np.random.default_rng(3).normal(size=(1, 8, HIDDEN))
    encoder_output = encoder_output.astype("float32")
    index = np.array([[0, 1, 2, 3, 4]], "int32")
    full = np.asarray(pointer.select(*pointer.memory(source, encoder_output), index))
    cut = np.asarray(
        pointer.select(*pointer.memory(source[:, :5], encoder_output[:, :5]), index)
    )
    # Words 0..2 still start inside the cut (word 2 without its second piece).
    np.testing.assert_allclose(cut[:, :3], full[:, :3], rtol=1e-6)
    assert np.all(full[0, 3] != 0)
    np.testing.assert_array_equal(cut[:, 3:], 0.0)
    np.testing.assert_array_equal(full[:, 4], 0.0)


def test_beam_rows_select_from_their_sentences_memory():
    pointer = _pointer()
    beams, t = 3, 4
    rng = np.random.default_rng(4)
    source = rng.integers(4, SOURCE_VOCAB, (2, 7)).astype("int32")
    source[1, 5:] = 0
    encoder_output = rng.normal(size=(2, 7, HIDDEN)).astype("float32")
    memory, positions = pointer.memory(source, encoder_output)
    # [B*K, t]: a different index per beam row
    index = rng.integers(0, 6, (2 * beams, t)).astype("int32")
    selected = np.asarray(pointer.select(memory, positions, index, num_beams=beams))
    tiled = np.asarray(
        pointer.select(
            np.repeat(np.asarray(memory), beams, axis=0),
            np.repeat(np.asarray(positions), beams, axis=0),
            index,
        )
    )
    assert selected.shape == (2 * beams, t, HIDDEN)
    np.testing.assert_allclose(selected, tiled, rtol=1e-6)
    assert np.any(selected != 0) and np.any(selected == 0)


def test_tables_start_at_zero_and_point_at_nothing():
    pointer = NextWordPointer(SOURCE_VOCAB, TARGET_VOCAB, hidden_dim=HIDDEN)
    source = np.array([[5, 12, 6]], "int32")
    target = np.array([[BOS, XX, XX]], "int32")
    encoder_output = np.ones((1, 3, HIDDEN), "float32")
    np.testing.assert_array_equal(
        np.asarray(pointer(target, source, encoder_output)), 0.0
    )
    assert sorted(w.name for w in pointer.trainable_weights) == ["bias", "kernel"]
    tables = {w.name for w in pointer.non_trainable_weights}
    assert {"word_starts", "word_symbols"} <= tables


def test_set_vocabularies_writes_0_1_tables():
    pointer = _pointer()
    starts = np.zeros(SOURCE_VOCAB, "float32")
    starts[WORD_STARTS] = 1.0
    symbols = np.zeros(TARGET_VOCAB, "float32")
    symbols[XX] = 1.0
    np.testing.assert_array_equal(np.asarray(pointer.word_starts), starts)
    np.testing.assert_array_equal(np.asarray(pointer.word_symbols), symbols)
    # Set again: replaced, not added to.
    pointer.set_vocabularies([4], [5, 6])
    assert np.flatnonzero(np.asarray(pointer.word_starts)).tolist() == [4]
    assert np.flatnonzero(np.asarray(pointer.word_symbols)).tolist() == [5, 6]


@pytest.mark.parametrize(
    "word_start_ids, word_symbol_ids, name",
    [
        ([], [XX], "word_start_ids"),
        ([4, SOURCE_VOCAB], [XX], "word_start_ids"),
        ([-1, 4], [XX], "word_start_ids"),
        (WORD_STARTS, [], "word_symbol_ids"),
        (WORD_STARTS, [TARGET_VOCAB], "word_symbol_ids"),
        (WORD_STARTS, [-2], "word_symbol_ids"),
    ],
)
def test_set_vocabularies_rejects_bad_ids(word_start_ids, word_symbol_ids, name):
    pointer = NextWordPointer(SOURCE_VOCAB, TARGET_VOCAB, hidden_dim=HIDDEN)
    with pytest.raises(ValueError, match=f"Received: {name}="):
        pointer.set_vocabularies(word_start_ids, word_symbol_ids)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"source_vocab_size": 0}, "source_vocab_size=0"),
        ({"target_vocab_size": -1}, "target_vocab_size=-1"),
        ({"hidden_dim": 0}, "hidden_dim=0"),
        ({"distance_window": -1}, "distance_window=-1"),
        ({"distance_window": 2, "pooling": "mean"}, "num_heads=None"),
        ({"distance_window": 2, "num_heads": 2}, "pooling='first'"),
    ],
)
def test_bad_arguments(kwargs, message):
    arguments = {
        "source_vocab_size": SOURCE_VOCAB,
        "target_vocab_size": TARGET_VOCAB,
        "hidden_dim": HIDDEN,
        **kwargs,
    }
    with pytest.raises(ValueError, match=message):
        NextWordPointer(**arguments)
