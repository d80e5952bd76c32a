"""The batch defaults of translating and parsing lines, kept free of heavy
imports: the argument parser reads them (`translate`, `parse`) beside the
library (`Translator`, `Parser`, `line_streaming`)."""

# A translation batch: the most lines, and the budget in estimated source
# tokens (`line_streaming.estimated_tokens`), padding included.
BATCH_SIZE = 256
BATCH_TOKENS = 4096

# A parse batch: the most sentences, and the budget in tree symbols, padding
# included: sentences times the longest sentence's `tree_length_limit` (3n +
# 21 symbols for n words), the steps and buffer a search step costs in
# proportion to (BUILD_NOTES.md, "Parsing speed").
PARSE_BATCH_SIZE = 64
PARSE_BATCH_SYMBOLS = 4096
