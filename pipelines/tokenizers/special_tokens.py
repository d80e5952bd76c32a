"""The special token ids of the tokenizers and the input pipeline.

Every tokenizer of this package reserves the first four ids for these symbols,
and the model side relies on `PAD_ID == 0` (padding mask). `keras_transformer`,
which may not import this package, has its own `PAD_ID`, `BOS_ID` and
`EOS_ID`; a test checks that the two agree. Tokenizers never add `BOS_ID` /
`EOS_ID` themselves:
`encode_sources` appends eos to sources and `transforms.add_target_special_ids`
adds bos and eos to targets.
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
