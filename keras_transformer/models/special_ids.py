"""The special token ids of the model and the searches."""

# The special ids the model and the searches rely on: padding (masked out of
# attention, loss and metrics), the decoder's first input and the end of a
# sentence. They are the tokenizers' reserved ids
# (`pipelines.tokenizers.special_tokens`, which this package may not import);
# a test checks that the two agree.
PAD_ID = 0
BOS_ID = 2
EOS_ID = 3
