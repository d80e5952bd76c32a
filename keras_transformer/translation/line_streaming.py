"""Lines in, outputs out, streaming: what `Translator` and `Parser` share
(and so `keras-transformer translate` and `parse`).

A search is any `fn(texts, decoding) -> (outputs [B, n], scores [B, n])`
(`Translator.search`, `Parser.search`, or a stand-in in a test).

The input is read in chunks of `CHUNK_LINES` lines; each chunk is sorted by
length (`estimated_tokens` for translation, the parser's tree bound for
parsing) into batches within a budget, padding included, and the outputs are
written back in input order as soon as every line before them is done, so the
output always holds the outputs of the input's first lines.
"""

import errno
import functools
import itertools
import os
import sys

from keras_transformer.decoding.decoding_config import DecodingConfig
from keras_transformer.runs.user_error import UserError
from keras_transformer.training.atomic_files import is_disk_full
from keras_transformer.translation.batch_defaults import BATCH_SIZE, BATCH_TOKENS
from keras_transformer.translation.line_files import read_lines
from keras_transformer.translation.progress_line import ProgressLine
from keras_transformer.validation import check_positive_int

# Lines sorted and batched together. Output is in input order, so a chunk's
# lines reach the output about when its longest line is done.
CHUNK_LINES = 2048


# UTF-8 bytes per subword piece, about: 4-5 for English or German (a piece
# of 3-4 letters and its space), 3 for Chinese (one character a piece), 2-4
# for Arabic or Cyrillic.
BYTES_PER_TOKEN = 4


def estimated_tokens(text):
    """The batch budget's measure of a line: its UTF-8 bytes / 4, rounded up.

    A stand-in for the subword tokens the model sees, used for both
    translators: the exported SavedModel has no tokenize signature (only
    `serving_default`, `translate`, `translate_beam_K` and `translate_ids`),
    so one count that
    needs no tokenizer batches a run directory and an export alike. Bytes, not
    whitespace-separated words, so that scripts written without spaces
    (Chinese, Japanese, Thai) are measured too.

    Args:
        text: str. One line.

    Returns:
        int, 0 for an empty line.
    """
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)


def stream_file(
    translator,
    input_path="-",
    output_path="-",
    decoding=None,
    total=None,
    progress=None,
    errors="strict",
    **batching,
):
    """Translates a file (or stdin) into a file (or stdout), streaming.

    `stream_lines` on `read_lines(input_path, errors)`, written to
    `<output_path>.partial`, which holds at every moment the translations of
    the input's first lines, in order, and is renamed to `output_path` when
    every line is done: a stopped run (or a full disk) leaves the lines done
    so far in the `.partial` file and an earlier `output_path` untouched.

    Args:
        translator: a search, `fn(texts, decoding) -> (outputs [B, n],
            scores [B, n])` (see the module docstring).
        input_path: str. Input file; `"-"` for stdin. Defaults to `"-"`.
        output_path: str. Output file; `"-"` for stdout. Defaults to `"-"`.
        decoding: a `DecodingConfig`. Defaults to `DecodingConfig()`.
        total: int or `None`. Number of input lines, for the progress display
            (`count_lines`).
        progress: a text stream for progress (e.g. stderr) or `None`.
        errors: how invalid UTF-8 is read, as `read_lines`.
        **batching: `batch_tokens`, `batch_size`, `chunk_size`, `length`,
            `empty_output`, `verb`, `powers_of_two`, as `ordered_outputs`.

    Returns:
        The number of lines translated.
    """
    lines = read_lines(input_path, errors)
    options = {"decoding": decoding, "total": total, "progress": progress}
    if output_path == "-":
        return stream_lines(translator, lines, **options, **batching)
    partial = f"{output_path}.partial"
    try:
        output = open(partial, "w", encoding="utf-8")
    except OSError as error:
        raise UserError(f"Cannot write {partial}: {error.strerror}") from None
    try:
        with output:
            count = stream_lines(translator, lines, output, **options, **batching)
    except OSError as error:
        if is_disk_full(error):  # the partial file stays: the lines done so far
            raise OSError(errno.ENOSPC, "The disk is full", partial) from error
        raise
    os.replace(partial, output_path)
    return count


def stream_lines(translator, lines, output=None, decoding=None, **options):
    """Translates an iterable of lines in length-sorted batches, writing as it
    goes, in input order (`ordered_outputs`, whose outputs of the first lines
    are written and flushed after each batch: a run stopped mid-way leaves
    the first lines of the input translated, in order).

    With `decoding.n_best == 1` one translation per line; otherwise `n_best`
    lines per input in the Moses n-best format `index ||| translation |||
    score`, the index counting input lines from 0.

    Args:
        translator: a search, `fn(texts, decoding) -> (outputs [B, n],
            scores [B, n])` (see the module docstring).
        lines: iterable of str (line ends are stripped).
        output: a text stream. Defaults to `sys.stdout` at call time.
        decoding: a `DecodingConfig`. Defaults to `DecodingConfig()`.
        **options: `batch_size`, `batch_tokens`, `total`, `progress`,
            `chunk_size`, `length`, `empty_output`, `verb`, `powers_of_two`,
            as `ordered_outputs`.

    Returns:
        The number of lines translated.

    Examples:
        >>> def shout(texts, decoding):
        ...     return [[t.upper()] for t in texts], [[0.0] for _ in texts]
        >>> stream_lines(shout, ["Hello world.", ""], io.StringIO())
        2
    """
    output = sys.stdout if output is None else output
    n_best = (DecodingConfig() if decoding is None else decoding).n_best
    count = 0
    pending = []
    flush = functools.partial(_write, output, pending)
    for translations, scores in ordered_outputs(
        translator, lines, decoding, flush=flush, **options
    ):
        if n_best == 1:
            pending.append(f"{translations[0]}\n")
        else:
            for text, score in zip(translations, scores, strict=True):
                pending.append(f"{count} ||| {text} ||| {score:.4f}\n")
        count += 1
    flush()
    return count


def _write(output, pending):
    """Writes and flushes the rows in `pending`, then empties it."""
    if pending:
        output.write("".join(pending))
        output.flush()
        pending.clear()


def ordered_outputs(
    translator,
    lines,
    decoding=None,
    batch_size=BATCH_SIZE,
    total=None,
    progress=None,
    batch_tokens=BATCH_TOKENS,
    chunk_size=CHUNK_LINES,
    length=estimated_tokens,
    empty_output="",
    verb="translated",
    powers_of_two=False,
    flush=None,
):
    """Yields `(translations [n], scores [n])` for each line of `lines`, in
    input order, searched in length-sorted batches: what `stream_lines`
    writes and `Translator.translate` returns.

    Streaming: the lines are read `chunk_size` at a time (the input is never
    held whole). Within a chunk, the lines are sorted by `length` and cut into
    batches of at most `batch_size` lines whose padded size, lines times the
    longest line's length, stays within `batch_tokens` (a longer line goes
    alone), so that a batch pads little. An empty (or whitespace-only) line
    is not sent to the translator: it gives `empty_output`, score 0, as the
    exported translator gives it. After each batch the outputs of the
    chunk's first lines that are all done are yielded, then `flush()` is
    called (when given), so a consumer can write them before the next batch
    runs.

    Args:
        translator: a search, `fn(texts, decoding) -> (outputs [B, n],
            scores [B, n])`.
        lines: iterable of str (line ends are stripped).
        decoding: a `DecodingConfig`. Defaults to `DecodingConfig()`.
        batch_size: int. The most lines per call. Defaults to `BATCH_SIZE`.
        total: int or `None`. Number of lines, for the progress display.
        progress: a text stream for progress (e.g. stderr) or `None`.
        batch_tokens: int. The budget of one call, in units of `length`,
            padding included. Defaults to `BATCH_TOKENS`.
        chunk_size: int. Lines sorted and batched together. Defaults to
            `CHUNK_LINES`.
        length: `fn(str) -> int`, a line's size for the budget. Defaults to
            `estimated_tokens`.
        empty_output: str. The output of an empty line. Defaults to `""`
            (the parser's is `(TOP )`).
        verb: str. The progress line's first word. Defaults to
            `"translated"`.
        powers_of_two: bool. Every batch holds a power of two of lines (the
            parser's: few shapes for its search to compile). Defaults to
            `False`.
        flush: `fn()` or `None`, called after each batch's outputs.

    Yields:
        `(translations, scores)`: lists of `decoding.n_best` items.
    """
    check_positive_int("batch_size", batch_size)
    check_positive_int("batch_tokens", batch_tokens)
    check_positive_int("chunk_size", chunk_size)
    decoding = DecodingConfig() if decoding is None else decoding
    meter = None if progress is None else ProgressLine(progress, total, verb=verb)
    try:
        for chunk in _chunks(lines, chunk_size):
            yield from _chunk_outputs(
                translator,
                chunk,
                decoding,
                lambda todo: _length_batches(
                    todo, length, batch_tokens, batch_size, powers_of_two
                ),
                meter,
                empty_output,
                flush,
            )
    finally:  # also after a failure: the count so far, and the line ended
        if meter is not None:
            meter.close()


def _chunks(lines, chunk_size):
    """Lists of up to `chunk_size` lines, line ends stripped."""
    lines = iter(lines)
    while True:
        chunk = [line.rstrip("\r\n") for line in itertools.islice(lines, chunk_size)]
        if not chunk:
            return
        yield chunk


def _length_batches(items, length, batch_tokens, batch_size, powers_of_two=False):
    """`(index, text)` items sorted by `length` (then index), in batches of at
    most `batch_size` whose count times the longest length stays within
    `batch_tokens`; a line over the budget forms a batch alone. With
    `powers_of_two`, every batch holds a power of two of lines (the lines
    past the largest power of two that fits go on to the next batch), so that
    a search compiled per batch shape meets few shapes."""
    batch = []
    for size, index, text in sorted((length(text), i, text) for i, text in items):
        # Sorted: this line is the longest of the batch it joins.
        while batch and (
            (len(batch) + 1) * max(size, 1) > batch_tokens or len(batch) == batch_size
        ):
            keep = _floor_power_of_two(len(batch)) if powers_of_two else len(batch)
            yield batch[:keep]
            batch = batch[keep:]
        batch.append((index, text))
    while batch:
        keep = _floor_power_of_two(len(batch)) if powers_of_two else len(batch)
        yield batch[:keep]
        batch = batch[keep:]


def _floor_power_of_two(count):
    """The largest power of two not over `count` (>= 1)."""
    return 1 << (count.bit_length() - 1)


def _chunk_outputs(
    translator, chunk, decoding, batches, meter, empty_output="", flush=None
):
    """Searches one chunk, yielding each ready prefix's outputs in order (see
    `ordered_outputs`)."""
    n_best = decoding.n_best
    results = [None] * len(chunk)  # (translations [n], scores [n]) per line
    todo = []
    for i, text in enumerate(chunk):
        if text.strip():
            todo.append((i, text))
        else:
            results[i] = ([empty_output] * n_best, [0.0] * n_best)
    done = 0
    for batch in itertools.chain([[]], batches(todo)):
        if batch:
            translations, scores = translator([text for _, text in batch], decoding)
            for (i, _), row, row_scores in zip(
                batch, translations, scores, strict=True
            ):
                results[i] = (row, row_scores)
        while done < len(results) and results[done] is not None:
            yield results[done]
            results[done] = True  # yielded; the strings are the caller's now
            done += 1
        if flush is not None:
            flush()
        if meter is not None:
            meter.update(len(batch) if batch else len(chunk) - len(todo))
