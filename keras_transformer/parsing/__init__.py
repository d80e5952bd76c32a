"""English constituency parsing with a trained run or its export (§6.3), in
one room: `Parser` (sentences in, trees out), the bracket constraint of its
search (`parser_constraint`), the in-process search (`parse_sentences`),
the scorer's helpers (`with_gold_tags`, `bracket_scores`, the baselines),
the evaluation of a parsing run and EVALB on two tree files. The trees
themselves (reading, linearization, de-linearization) are `pipelines`'.

Application layer: may import the core, `runs`, `translation`'s line
streaming, `pipelines` and `savedmodels`."""

from keras_transformer.lazy_exports import lazy_exports

_LAZY = {
    "Parser": "keras_transformer.parsing.parser",
    "parser_constraint": "keras_transformer.parsing.tree_constraint",
    "parse_sentences": "keras_transformer.parsing.parse_search",
    "parser_search": "keras_transformer.parsing.parse_search",
    "with_gold_tags": "keras_transformer.parsing.bracket_scoring",
    "bracket_scores": "keras_transformer.parsing.bracket_scoring",
    "baseline_scores": "keras_transformer.parsing.bracket_scoring",
    "evaluate_parses": "keras_transformer.parsing.parse_evaluation",
    "evalb_files": "keras_transformer.parsing.file_scoring",
}

__all__ = [
    "Parser",
    "baseline_scores",
    "bracket_scores",
    "evalb_files",
    "evaluate_parses",
    "parse_sentences",
    "parser_constraint",
    "parser_search",
    "with_gold_tags",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
