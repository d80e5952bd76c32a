"""The special token ids, fixed here and nowhere else.

Every tokenizer of this package reserves the first four ids for these symbols,
and the model side relies on `PAD_ID == 0` (padding mask). Tokenizers never add
`BOS_ID` / `EOS_ID` themselves: the pipeline does (see `pipeline.py`).
"""

PAD_ID = 0  # padding; masked out of attention, loss and metrics
UNK_ID = 1  # unknown symbol (rare with byte fallback / full character coverage)
BOS_ID = 2  # beginning of sentence: first token of the decoder input
EOS_ID = 3  # end of sentence: ends the source and the decoder target

PAD_PIECE = "<pad>"
UNK_PIECE = "<unk>"
BOS_PIECE = "<s>"
EOS_PIECE = "</s>"

# Pieces in id order: `RESERVED_PIECES[i]` has id i.
RESERVED_PIECES = (PAD_PIECE, UNK_PIECE, BOS_PIECE, EOS_PIECE)
NUM_RESERVED = len(RESERVED_PIECES)
