"""English constituency parsing with a trained run (§6.3): `keras-transformer
parse` (sentences in, bracketed trees out) and `evaluate` of a parsing run
(labelled bracket F1, EVALB-compatible).

A sentence's words (split on whitespace) are the source; the model emits the
linearized tree (whole-token symbols, `pipelines.SymbolTokenizer`), which
`pipelines.delinearize` turns into a tree over exactly those words,
repairing invalid output and counting the repairs. F1 scores the brackets
with the gold tags on the leaves (`with_gold_tags`: EVALB deletes
punctuation by tag), whether the run writes `XX` leaves or predicts tags
(`tree_tags`, whose evaluation also reports F1 with the predicted tags and
the tagging accuracy).
"""

import dataclasses

import pipelines
from keras_transformer.cli.compute_dtypes import decodes_with_xla
from keras_transformer.cli.data import split_trees
from keras_transformer.cli.evaluation_files import (
    best_hypothesis_decoding,
    write_evaluation,
)
from keras_transformer.cli.run_directory import RunDirectory
from keras_transformer.cli.run_tokenizer import (
    detokenize_fn,
    load_target_tokenizer,
    source_ids_fn,
)
from keras_transformer.cli.trained_model import load_trained_model
from keras_transformer.decoding.compiled_translate import compiled_translate
from keras_transformer.evaluation import evalb, translate_texts


def parse_sentences(
    recipe,
    tokenizer,
    target_tokenizer,
    model,
    sentences,
    config,
    batch_size=64,
    progress=False,
    translate_fn=None,
):
    """Parses sentences (str, words separated by spaces); `progress` shows a
    bar over them. `translate_fn` is a search compiled once by the caller
    (`parser_search`), reused across calls; by default one is compiled for
    this call.

    Returns:
        `(trees, repairs)`: one `pipelines.Tree` and one
        `pipelines.RepairCounts` per sentence (`(TOP )` and no repairs for an
        empty one).
    """
    words = [sentence.split() for sentence in sentences]
    indices = [i for i, w in enumerate(words) if w]
    # A caller's compiled search carries its constraint: not built again for
    # each batch of a streaming parse.
    constrained = config.constrain_brackets
    constraint = (
        None if translate_fn else _constraint(recipe, target_tokenizer, model, config)
    )
    outputs = (
        translate_texts(
            model,
            [" ".join(words[i]) for i in indices],
            # The export's path from text to ids: cut to the training length.
            source_ids_fn(tokenizer, recipe.max_train_length),
            detokenize_fn(target_tokenizer),
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


def _constraint(recipe, target_tokenizer, model, config):
    """The search's `BracketConstraint` (`config.constrain_brackets`), or
    `None`."""
    if not config.constrain_brackets:
        return None
    # Imported here: savedmodels sits above keras_transformer (BUILD_NOTES.md,
    # "Packages").
    from savedmodels.parser_module import parser_constraint

    return parser_constraint(
        target_tokenizer,
        model.target_vocab_size,
        recipe.tree_tags,
        match_brackets=config.match_brackets,
    )


def parser_search(
    recipe, target_tokenizer, model, config, jit_compile=False, dynamic_shapes=False
):
    """`parse_sentences`' `translate_fn`: the search of `config` (with the
    recipe's constraint) compiled once, for a caller that parses again and
    again (the demo's dev F1 at each checkpoint, streaming `parse`). Graph
    mode by default, the faster path on CPUs (BUILD_NOTES.md, "Speed");
    `jit_compile` and `dynamic_shapes` as `compiled_translate`."""
    return compiled_translate(
        model,
        config,
        jit_compile=jit_compile,
        constraint=_constraint(recipe, target_tokenizer, model, config),
        dynamic_shapes=dynamic_shapes,
    )


def with_gold_tags(gold, trees):
    """`trees` (over the words of `gold`) with the gold trees' tags on their
    leaves. F1 then scores the brackets alone, the same way for `XX` leaves
    and for predicted tags (`tree_tags`, where tagging is a task the decoder
    learns beside the brackets), as a parser given the gold tags is scored:
    a punctuation tag the decoder gets wrong would otherwise delete a word
    from one tree only, and EVALB counts the sentence as an error."""
    return [
        pipelines.retag(tree, [leaf.label for leaf in reference.preterminals()])
        for reference, tree in zip(gold, trees, strict=True)
    ]


def bracket_scores(gold, trees):
    """EVALB-compatible figures of `trees` against `gold` (COLLINS.prm), the
    gold tags on the leaves (`with_gold_tags`): F1 (all and len <= 40),
    recall, precision, exact match, error sentences."""
    result = evalb(
        [str(t) for t in gold], [str(t) for t in with_gold_tags(gold, trees)]
    )
    return {
        "f1": round(result.all.f_measure, 2),
        "f1_len_40": round(result.short.f_measure, 2),
        "recall": round(result.all.recall, 2),
        "precision": round(result.all.precision, 2),
        "exact_match": round(result.all.complete_match, 2),
        "error_sentences": result.all.error_sentences,
    }


def baseline_scores(recipe, gold):
    """`{"flat": scores, "right_branching": scores}` on `gold`: the two
    baselines of `pipelines.trees.tree_baselines`, labelled with the recipe's
    training trees' most frequent labels, scored by `bracket_scores`."""
    train, _ = split_trees(recipe, recipe.train_split)
    top, inner = pipelines.baseline_labels(train)
    builders = {
        "flat": lambda words: pipelines.flat_tree(words, top),
        "right_branching": lambda words: pipelines.right_branching_tree(
            words, top, inner
        ),
    }
    return {
        name: bracket_scores(gold, [build(list(tree.words())) for tree in gold])
        for name, build in builders.items()
    }


def load_parser(run_dir, weights=None, overrides=None, compute_dtype=None):
    """`(recipe, tokenizer, target_tokenizer, model, weights, config)` of a
    parsing run, the search being the recipe's (§6.3: beam 21, alpha 0.3,
    +300) with `overrides`, computing in `compute_dtype` (`"float32"`, the
    default, or `"bfloat16"`, as `load_trained_model`)."""
    recipe, tokenizer, model, weights = load_trained_model(
        run_dir, weights, task="parsing", compute_dtype=compute_dtype or "float32"
    )
    target_tokenizer = load_target_tokenizer(RunDirectory(run_dir), recipe)
    config = best_hypothesis_decoding(recipe, overrides)
    return recipe, tokenizer, target_tokenizer, model, weights, config


def evaluate_parses(
    run_dir,
    recipe,
    tokenizer,
    model,
    weights,
    split,
    limit,
    decoding,
    batch_size,
    verbose,
):
    """`evaluate` of a parsing run: parses a split's sentences and scores
    them against its trees (EVALB-compatible, `COLLINS.prm`, "all" and
    "len <= 40"); writes `eval/<split>.txt` (the trees) and `.json`."""
    split = split or recipe.test_split
    gold, _ = split_trees(recipe, split)
    gold = gold[:limit] if limit is not None else gold
    target = load_target_tokenizer(RunDirectory(run_dir), recipe)
    config = best_hypothesis_decoding(recipe, decoding)
    sentences = [" ".join(tree.words()) for tree in gold]
    trees, repairs = parse_sentences(
        recipe, tokenizer, target, model, sentences, config, batch_size, bool(verbose)
    )
    references = [str(t) for t in gold]
    result = evalb(references, [str(t) for t in with_gold_tags(gold, trees)])
    # With predicted tags, the figures with them too (punctuation deleted by
    # the predicted tags, error sentences scored zero) and the tagging
    # accuracy.
    tagged = evalb(references, [str(t) for t in trees]) if recipe.tree_tags else None
    total = sum(repairs, pipelines.RepairCounts())
    repaired = sum(1 for counts in repairs if counts.total)
    scores = {
        "task": "parsing",
        "f1": result.all.f_measure,
        "recall": result.all.recall,
        "precision": result.all.precision,
        "exact_match": result.all.complete_match,
        "tagging_accuracy": tagged.all.tagging_accuracy if tagged else None,
        "f1_predicted_tags": tagged.all.f_measure if tagged else None,
        "f1_len_40": result.short.f_measure,
        "evalb": result.to_dict(),
        "repaired_outputs": repaired,
        "repairs": dataclasses.asdict(total),
        "gold_tags_on_leaves": True,
    }
    if verbose:
        tags = ", gold tags on the leaves"
        if tagged:
            tags += (
                f"; predicted tags: F1 {tagged.all.f_measure:.2f}, tagging "
                f"{tagged.all.tagging_accuracy:.2f}"
            )
        print(
            f"F1 {result.all.f_measure:.2f} (recall {result.all.recall:.2f}, "
            f"precision {result.all.precision:.2f}, exact "
            f"{result.all.complete_match:.2f}{tags}); len <= "
            f"{result.params.cutoff_len}: F1 {result.short.f_measure:.2f}; "
            f"{len(gold)} sentences, {repaired} repaired, "
            f"{result.all.error_sentences} error sentences"
        )
    return write_evaluation(
        run_dir,
        split,
        [str(t) for t in trees],
        scores,
        weights,
        config,
        model.compute_dtype,
    )
