"""Translate a test set with the decoding library and score it (paper §6.1)."""

import keras
import numpy as np

from keras_transformer.decoding.bracket_constraint import tree_length_limit
from keras_transformer.decoding.compiled_translate import compiled_translate
from keras_transformer.decoding.translate import check_decoding_config
from keras_transformer.evaluation.bleu_tokenizer import bleu_tokenizer
from keras_transformer.evaluation.paper_style_bleu import check_paper_style_language
from keras_transformer.evaluation.score_translations import score_translations
from keras_transformer.models import BOS_ID, EOS_ID, PAD_ID


def _strip(ids, eos_id, pad_id=PAD_ID):
    """Token ids up to (not including) eos or padding, as a list of ints."""
    out = []
    for token in ids:
        if token in (eos_id, pad_id):
            break
        out.append(int(token))
    return out


def translate_texts(
    model,
    sources,
    tokenize_fn,
    detokenize_fn,
    config=None,
    batch_size=64,
    width_multiple=8,
    jit_compile=True,
    bos_id=BOS_ID,
    eos_id=EOS_ID,
    translate_fn=None,
    constraint=None,
    word_counts=None,
    progress=False,
):
    """Translates raw sentences: tokenize, batch by length, decode, detokenize.

    Sentences are sorted by token length so that each batch holds similar
    lengths, and each batch is padded to a multiple of `width_multiple` so that
    the compiled search is traced for a few widths only. The best hypothesis
    of each sentence is returned, in the input order.

    Args:
        model: a `Transformer`.
        sources: list of str.
        tokenize_fn: `fn(list of str) -> list of list of int`, each source's
            token ids (with eos if the model was trained with it), called
            once.
        detokenize_fn: `fn(list of list of int) -> list of str`, target ids
            (no bos, eos or padding) to text, called once per batch.
        config: a `DecodingConfig` (see `translate`). Defaults to
            `DecodingConfig()`, the paper's beam search (§6.1).
        batch_size: int. Sentences per decoding batch. Defaults to `64`.
        width_multiple: int. Source widths are rounded up to a multiple of it.
            Defaults to `8`.
        jit_compile: bool. XLA on TensorFlow (see `compiled_translate`).
            Defaults to `True`.
        bos_id: int. Defaults to `BOS_ID` (2).
        eos_id: int. Defaults to `EOS_ID` (3).
        translate_fn: optional `fn(source_ids) -> (ids, scores)`, e.g. from
            `compiled_translate`, reused across calls (a callback compiles
            once); when given, `config`, `jit_compile` and `bos_id` are
            ignored. Defaults to compiling one for this call.
        constraint: optional `BracketConstraint` (parsing): well-formed
            trees with `word_counts[i]` word symbols for source i.
        word_counts: list of int, one per source; needed with `constraint`
            (and then with `translate_fn`, one compiled with it). The
            search's buffer then follows each batch's longest tree
            (`tree_length_limit`, rounded up to 64), not its
            source width + `config.max_extra_length`, when that is shorter.
        progress: bool. Show a Keras progress bar over the sentences (with
            their rate and an ETA). Defaults to `False`.

    Returns:
        A list of str, one translation per source.

    Examples:
        >>> translate_texts(model, ["Hello."], tokenize, detokenize,
        ...                 DecodingConfig(method="greedy"))
    """
    fn = translate_fn or compiled_translate(
        model,
        check_decoding_config(config),
        jit_compile=jit_compile,
        bos_id=bos_id,
        eos_id=eos_id,
        constraint=constraint,
    )
    if translate_fn is None and (constraint is None) != (word_counts is None):
        raise ValueError(
            "`constraint` and `word_counts` go together. Received: "
            f"constraint={constraint!r}, word_counts={word_counts!r}"
        )
    token_ids = [list(ids) for ids in tokenize_fn(list(sources))]
    order = np.argsort([len(ids) for ids in token_ids], kind="stable")
    outputs = [None] * len(sources)
    bar = keras.utils.Progbar(len(sources), unit_name="sentence") if progress else None
    for start in range(0, len(order), batch_size):
        indices = order[start : start + batch_size]
        longest = max(1, max(len(token_ids[i]) for i in indices))
        width = -(-longest // width_multiple) * width_multiple
        batch = np.zeros((len(indices), width), "int32")
        for row, i in enumerate(indices):
            batch[row, : len(token_ids[i])] = token_ids[i]
        if word_counts is None:
            ids, _ = fn(batch)
        else:
            counts = np.asarray([word_counts[i] for i in indices], "int32")
            buffer = _tree_buffer(counts, width, config)
            extra = () if buffer is None else (buffer,)
            ids, _ = fn(batch, counts, *extra)
        # [B, N, T] -> [B, T], the best hypothesis
        best = np.asarray(ids)[:, 0].tolist()
        texts = detokenize_fn([_strip(row, eos_id) for row in best])
        for i, text in zip(indices, texts, strict=True):
            outputs[i] = text
        if bar is not None:
            bar.update(start + len(indices))
    return outputs


# A parsing batch's buffer is rounded up to a multiple of this: few distinct
# (width, buffer) shapes, each of which XLA compiles once per search.
TREE_BUFFER_MULTIPLE = 64


def _tree_buffer(word_counts, width, config):
    """The search buffer of a parsing batch: its longest
    `tree_length_limit`, rounded up to `TREE_BUFFER_MULTIPLE`, when
    shorter than the source width + `max_extra_length`; else `None` (that
    default)."""
    limit = int(tree_length_limit(word_counts).max())
    rounded = -(-limit // TREE_BUFFER_MULTIPLE) * TREE_BUFFER_MULTIPLE
    default = width + check_decoding_config(config).max_extra_length
    return rounded if rounded < default else None


def evaluate(
    model,
    sources,
    references,
    tokenize_fn,
    detokenize_fn,
    config=None,
    target_language=None,
    paper_style=False,
    print_fn=print,
    **translate_texts_kwargs,
):
    """Translates a test set and scores it with sacreBLEU (BLEU and chrF).

    Decodes with `config`, by default the paper's settings (beam 4, alpha
    0.6, at most source length + 50 tokens; §6.1), detokenizes, and scores
    against the raw references. chrF is always reported beside BLEU, and
    BLEU's tokenizer follows `target_language` (`13a` unless the target is
    Chinese, Japanese or Korean; see `bleu_tokenizer`). The sacreBLEU
    signatures, which name that tokenizer (`tok:13a`, `tok:zh`), are always
    printed beside the scores, so that numbers can be compared across papers.
    The language is checked before decoding, so that a missing Japanese or
    Korean tokenizer fails at once.

    Args:
        model: a `Transformer`.
        sources: list of str, the source side of the test set.
        references: list of str, one raw reference per source.
        tokenize_fn: `fn(list of str) -> list of list of int`, source texts
            to ids (see `translate_texts`).
        detokenize_fn: `fn(list of list of int) -> list of str`, target ids
            to texts.
        config: a `DecodingConfig` (see `translate`). Defaults to
            `DecodingConfig()`.
        target_language: str or `None`. The references' language code (e.g.
            `"de"`, `"zh-Hans"`, `"ja"`), or `None` if not known (BLEU then
            uses `13a`). Defaults to `None`.
        paper_style: bool. Also report the paper's tokenized, compound-split
            BLEU, labelled as such (Table 2 comparison only; `target_language`
            must be `"de"` or `"fr"`). Defaults to `False`.
        print_fn: callable used for the report, or `None` for silence.
            Defaults to `print`.
        **translate_texts_kwargs: the batching and compilation arguments of
            `translate_texts` (`batch_size`, `width_multiple`, `jit_compile`,
            `bos_id`, `eos_id`, `translate_fn`).

    Returns:
        The dict of `score_translations`, plus `hypotheses` (list of str).

    Examples:
        >>> result = evaluate(model, sources, references, tokenize, detokenize,
        ...                   target_language="de")
        >>> result["bleu"], result["bleu_signature"], result["chrf"]
    """
    config = check_decoding_config(config)
    tokenize = bleu_tokenizer(target_language)
    if paper_style:
        check_paper_style_language(target_language)
    if len(sources) != len(references):
        raise ValueError(
            "Expected one reference per source. Received: "
            f"len(sources)={len(sources)}, len(references)={len(references)}"
        )
    hypotheses = translate_texts(
        model, sources, tokenize_fn, detokenize_fn, config, **translate_texts_kwargs
    )
    result = score_translations(
        hypotheses,
        references,
        tokenize=tokenize,
        paper_style=paper_style,
        target_language=target_language,
    )
    result["hypotheses"] = hypotheses
    if print_fn is not None:
        print_fn(f"sacreBLEU BLEU = {result['bleu']:.2f}  {result['bleu_signature']}")
        print_fn(f"sacreBLEU chrF = {result['chrf']:.2f}  {result['chrf_signature']}")
        if paper_style:
            print_fn(f"{result['paper_style_label']}: {result['paper_style_bleu']:.2f}")
    return result
