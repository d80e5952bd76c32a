"""Scoring parses (§6.3): labelled bracket figures, EVALB-compatible, with
the gold tags on the leaves, and the trivial baselines they are read beside.

F1 scores the brackets with the gold tags on the leaves (`with_gold_tags`:
EVALB deletes punctuation by tag), whether the run writes `XX` leaves or
predicts tags (`tree_tags`).
"""

import pipelines
from keras_transformer.evaluation import evalb
from keras_transformer.runs.run_data import split_trees


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
