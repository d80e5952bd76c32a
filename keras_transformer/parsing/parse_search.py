"""A parsing run's search in-process (§6.3): sentences in, trees out.

A sentence's words (split on whitespace) are the source; the model emits the
linearized tree (whole-token symbols, `pipelines.SymbolTokenizer`), under the
bracket constraint of `parser_constraint` where the recipe asks for it, and
`pipelines.delinearize` turns the symbols into a tree over exactly those
words, repairing invalid output and counting the repairs. `Parser` (one
batch at a time, its search compiled once) and `evaluate` of a parsing run
both call `parse_sentences`.
"""

import pipelines
from keras_transformer.decoding.compiled_translate import compiled_translate
from keras_transformer.evaluation import translate_texts
from keras_transformer.parsing.tree_constraint import parser_constraint
from keras_transformer.runs.compute_dtypes import decodes_with_xla
from keras_transformer.runs.run_tokenizer import detokenize_fn, source_ids_fn


def parse_sentences(
    loaded,
    sentences,
    config,
    batch_size=64,
    progress=False,
    translate_fn=None,
):
    """Parses sentences (str, words separated by spaces) with a `LoadedRun`
    of a parsing run; `progress` shows a bar over them. `translate_fn` is a
    search compiled once by the caller (`parser_search`), reused across
    calls; by default one is compiled for this call.

    Returns:
        `(trees, repairs)`: one `pipelines.Tree` and one
        `pipelines.RepairCounts` per sentence (`(TOP )` and no repairs for an
        empty one).
    """
    recipe, model = loaded.recipe, loaded.model
    words = [sentence.split() for sentence in sentences]
    indices = [i for i, w in enumerate(words) if w]
    # A caller's compiled search carries its constraint: not built again for
    # each batch of a streaming parse.
    constrained = config.constrain_brackets
    constraint = None if translate_fn else search_constraint(loaded, config)
    outputs = (
        translate_texts(
            model,
            [" ".join(words[i]) for i in indices],
            # The export's path from text to ids: cut to the training length.
            source_ids_fn(loaded.tokenizer, recipe.max_train_length),
            detokenize_fn(loaded.target_tokenizer),
            config=config,
            batch_size=batch_size,
            width_multiple=16,
            constraint=constraint,
            word_counts=[len(words[i]) for i in indices] if constrained else None,
            progress=progress,
            jit_compile=decodes_with_xla(model),
            translate_fn=translate_fn,
        )
        if indices
        else []
    )
    trees = [pipelines.Tree(pipelines.ROOT_LABEL, ())] * len(sentences)
    repairs = [pipelines.RepairCounts()] * len(sentences)
    for index, symbols in zip(indices, outputs, strict=True):
        trees[index], repairs[index] = pipelines.delinearize(
            symbols, words[index], tags=recipe.tree_tags
        )
    return trees, repairs


def search_constraint(loaded, config):
    """The search's `BracketConstraint` for `config` (its
    `constrain_brackets`), or `None`."""
    if not config.constrain_brackets:
        return None
    return parser_constraint(
        loaded.target_tokenizer,
        loaded.model.target_vocab_size,
        loaded.recipe.tree_tags,
        match_brackets=config.match_brackets,
    )


def parser_search(loaded, config, jit_compile=False, dynamic_shapes=False):
    """`parse_sentences`' `translate_fn`: the search of `config` (with the
    recipe's constraint) compiled once, for a caller that parses again and
    again (the demo's dev F1 at each checkpoint, streaming `parse`). Graph
    mode by default, the faster path on CPUs (BUILD_NOTES.md, "Parsing speed");
    `jit_compile` and `dynamic_shapes` as `compiled_translate`."""
    return compiled_translate(
        loaded.model,
        config,
        jit_compile=jit_compile,
        constraint=search_constraint(loaded, config),
        dynamic_shapes=dynamic_shapes,
    )
