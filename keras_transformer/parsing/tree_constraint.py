"""The bracket constraint of a parsing run's search (§6.3): which symbols
of the target vocabulary are leaves, opening and closing brackets, for the
`BracketConstraint` that `Parser`, `evaluate` and the export search under."""

from keras_transformer.decoding.bracket_constraint import BracketConstraint
from keras_transformer.models import EOS_ID
from pipelines import symbol_classes


def parser_constraint(target_tokenizer, vocab_size, tags, match_brackets=False):
    """The `BracketConstraint` of a parsing run: its symbol vocabulary's leaf,
    opening and closing ids (classified as `delinearize` reads them) over
    the model's `vocab_size` outputs; with `match_brackets`, each opening
    bracket's close (`(NP` -> `)NP`) matched on a stack."""
    vocabulary = target_tokenizer.vocabulary
    leaves, opens, closes = symbol_classes(vocabulary, tags=tags)
    matching = None
    if match_brackets:
        close_ids = {vocabulary[index][1:]: index for index in closes}
        matching = [close_ids.get(vocabulary[index][1:], -1) for index in opens]
    return BracketConstraint(
        vocab_size, leaves, opens, closes, eos_id=EOS_ID, matching_close_ids=matching
    )
