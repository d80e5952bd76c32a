"""How a parse streams: sentences batched by the symbols their trees may
take, `(TOP )` for an empty line, trees in input order (`Parser.parse`,
`Parser.parse_file` and `keras-transformer parse`, over any search
function)."""

import pipelines
from keras_transformer.translation.batch_defaults import (
    PARSE_BATCH_SIZE,
    PARSE_BATCH_SYMBOLS,
)
from keras_transformer.translation.line_streaming import stream_file

# The output of an empty line: the root over no words.
EMPTY_TREE = f"({pipelines.ROOT_LABEL} )"


def parse_cost(text):
    """The batch budget's measure of a line: the most symbols its tree may
    take under the bracket constraint (`tree_length_limit` of its
    whitespace-separated words)."""
    from keras_transformer.decoding.bracket_constraint import tree_length_limit

    return int(tree_length_limit(len(text.split())))


def tree_batching(batch_tokens=None, batch_size=PARSE_BATCH_SIZE):
    """`ordered_outputs`' options of a parse: batches of at most `batch_size`
    sentences whose padded cost (sentences times the longest one's
    `parse_cost`) stays within `batch_tokens` symbols (`None`:
    `PARSE_BATCH_SYMBOLS`), a power of two of sentences each (few shapes for
    the search to compile); `(TOP )` for an empty line."""
    return {
        "batch_tokens": PARSE_BATCH_SYMBOLS if batch_tokens is None else batch_tokens,
        "batch_size": batch_size,
        "length": parse_cost,
        "empty_output": EMPTY_TREE,
        "verb": "parsed",
        "powers_of_two": True,
    }


def stream_trees(
    search,
    input_path="-",
    output_path="-",
    decoding=None,
    batch_tokens=None,
    batch_size=PARSE_BATCH_SIZE,
    **options,
):
    """One bracketed tree per input line, streamed as `stream_file` streams
    translations (`Parser.parse_file`'s engine, given any search function).

    The input is read in chunks, each sorted by sentence length into batches
    (`tree_batching`); trees are written in input order as soon as every
    line before them is done, to `<output_path>.partial`, renamed to
    `output_path` at the end (a killed run leaves the finished lines there,
    and nothing under the final name). An empty line gives `(TOP )`; invalid
    UTF-8 is read with replacement (U+FFFD), as the export reads its
    requests.

    Args:
        search: `fn(texts, decoding) -> (trees [B, 1] str, scores [B, 1])`.
        input_path: str. Input file; `"-"` for stdin.
        output_path: str. Output file; `"-"` for stdout.
        decoding: a `DecodingConfig`.
        batch_tokens, batch_size: as `tree_batching`.
        **options: `total`, `progress`, `chunk_size`, as `stream_file`.

    Returns:
        The number of lines parsed.
    """
    return stream_file(
        search,
        input_path,
        output_path,
        decoding=decoding,
        errors="replace",
        **tree_batching(batch_tokens, batch_size),
        **options,
    )
