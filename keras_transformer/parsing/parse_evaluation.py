"""`evaluate` of a parsing run (§6.3): parses a split's sentences and scores
them against its trees, labelled bracket F1 (EVALB-compatible)."""

import dataclasses

import pipelines
from keras_transformer.evaluation import evalb
from keras_transformer.parsing.bracket_scoring import with_gold_tags
from keras_transformer.parsing.parse_search import parse_sentences
from keras_transformer.runs.evaluation_files import (
    best_hypothesis_decoding,
    write_evaluation,
)
from keras_transformer.runs.run_data import split_trees


def evaluate_parses(loaded, split, limit, decoding, batch_size, verbose):
    """`evaluate` of a parsing run: parses a split's sentences and scores
    them against its trees (EVALB-compatible, `COLLINS.prm`, "all" and
    "len <= 40"); writes `eval/<split>.txt` (the trees) and `.json`."""
    recipe = loaded.recipe
    split = split or recipe.test_split
    gold, _ = split_trees(recipe, split)
    gold = gold[:limit] if limit is not None else gold
    config = best_hypothesis_decoding(recipe, decoding)
    sentences = [" ".join(tree.words()) for tree in gold]
    trees, repairs = parse_sentences(
        loaded, sentences, config, batch_size, bool(verbose)
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
        loaded.run.path,
        split,
        [str(t) for t in trees],
        scores,
        loaded.weights,
        config,
        loaded.model.compute_dtype,
    )
