"""Attention pictures: one sentence's attention as a PNG (Figures 3-5)."""

import dataclasses

import numpy as np

from keras_transformer.decoding.translate import translate
from keras_transformer.runs.loaded_run import load_run
from keras_transformer.runs.run_tokenizer import source_ids_fn
from keras_transformer.runs.user_error import UserError
from keras_transformer.visualization import render_attention
from pipelines import BOS_ID, EOS_ID, PAD_ID


def _pieces(tokenizer, ids):
    return [p.decode("utf-8") for p in tokenizer.id_to_piece(ids).numpy()]


def attention(
    run_dir,
    sentence,
    png,
    target=None,
    kind="cross",
    layer=-1,
    heads=None,
    weights=None,
    verbose=0,
):
    """Draws a trained model's attention weights for `sentence` to `png`.

    The target side is `target` when given (teacher forcing), otherwise the
    model's greedy translation of `sentence`. Columns are source pieces (eos
    last); rows are the decoder's input pieces (bos first) for the decoder
    kinds, source pieces for `"encoder"`.

    Returns:
        `(path, weights)`: the PNG path and the plotted `[heads, rows, cols]`.
    """
    loaded = load_run(run_dir, weights, "translation")
    recipe, tokenizer, model = loaded.recipe, loaded.tokenizer, loaded.model
    if not sentence.strip():
        raise UserError("--sentence is empty. Received: sentence=''")
    tokenize = source_ids_fn(tokenizer, recipe.max_train_length)
    source = np.array(tokenize([sentence]), "int32")  # [1, S]
    if target is None:
        greedy = dataclasses.replace(recipe.decoding, method="greedy", n_best=1)
        ids, _ = translate(model, source, greedy, bos_id=BOS_ID, eos_id=EOS_ID)
        output = [int(i) for i in np.asarray(ids)[0, 0] if i not in (PAD_ID, EOS_ID)]
    else:
        output = tokenizer.tokenize([target]).to_list()[0]
    target_in = np.array([[BOS_ID, *output]], "int32")  # [1, T]
    try:
        path, plotted = render_attention(
            model,
            source,
            target_in,
            _pieces(tokenizer, source[0]),
            _pieces(tokenizer, target_in[0]),
            png,
            kind=kind,
            layer=layer,
            heads=heads,
        )
    except ImportError as error:
        raise UserError(str(error)) from None
    if verbose:
        print(f"Attention ({kind}, layer {layer}): {path}")
    return path, plotted
