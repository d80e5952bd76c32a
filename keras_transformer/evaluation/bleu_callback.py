"""A training callback that decodes a dev sample every N steps and logs BLEU."""

import keras

from keras_transformer.decoding.compiled_translate import compiled_translate
from keras_transformer.decoding.decoding_config import DecodingConfig
from keras_transformer.decoding.translate import check_decoding_config
from keras_transformer.evaluation.bleu_tokenizer import bleu_tokenizer
from keras_transformer.evaluation.evaluate import translate_texts
from keras_transformer.evaluation.score_translations import score_translations
from keras_transformer.models import BOS_ID, EOS_ID


class BleuCallback(keras.callbacks.Callback):
    """Translates a small dev sample every `every_n_steps` steps and logs BLEU.

    Decoding is greedy by default (the cheapest way to follow progress; pass
    `config=DecodingConfig()` for the paper's beam search, §6.1). BLEU's
    tokenizer follows `target_language` (see `bleu_tokenizer`; chosen when the
    callback is made, so that a missing Japanese or Korean tokenizer fails
    before training starts). The scores are added to the batch `logs` as
    `dev_bleu` and `dev_chrf` (so callbacks after this one, e.g. TensorBoard,
    see them), printed with the BLEU signature, and BLEU is kept in
    `self.scores` as `(step, bleu)` pairs.

    Args:
        sources: list of str, dev sources (a few hundred at most: the decode
            runs inside training).
        references: list of str, one reference per source.
        tokenize_fn: `fn(list of str) -> list of list of int` (see
            `translate_texts`).
        detokenize_fn: `fn(list of list of int) -> list of str`.
        config: a `DecodingConfig` (see `translate`). Defaults to
            `DecodingConfig(method="greedy")`. The search is compiled once, at
            the first decode; it reads the weights as they are at each call.
        target_language: str or `None`. The references' language code, or
            `None` if not known (BLEU then uses `13a`). Defaults to `None`.
        every_n_steps: int. Decode after every this many training steps.
            Defaults to `1000`.
        verbose: bool. Print each score. Defaults to `True`.
        batch_size: int. Sentences per decoding batch. Defaults to `64`.
        jit_compile: bool. XLA on TensorFlow. Defaults to `True`.
        bos_id: int. Defaults to `BOS_ID` (2).
        eos_id: int. Defaults to `EOS_ID` (3).

    References:
        - [Papineni et al., 2002. BLEU: a Method for Automatic Evaluation of Machine
          Translation](https://aclanthology.org/P02-1040/).
        - [Post, 2018. A Call for Clarity in Reporting BLEU Scores](
          https://aclanthology.org/W18-6319/).

    Examples:
        >>> callback = BleuCallback(dev_sources, dev_references, tokenize,
        ...                         detokenize, target_language="de",
        ...                         every_n_steps=2000)
        >>> model.fit(dataset, callbacks=[callback])
    """

    def __init__(
        self,
        sources,
        references,
        tokenize_fn,
        detokenize_fn,
        config=None,
        target_language=None,
        every_n_steps=1000,
        verbose=True,
        batch_size=64,
        jit_compile=True,
        bos_id=BOS_ID,
        eos_id=EOS_ID,
    ):
        super().__init__()
        if not isinstance(every_n_steps, int) or every_n_steps < 1:
            raise ValueError(
                "`every_n_steps` must be a positive integer. "
                f"Received: every_n_steps={every_n_steps}"
            )
        if len(sources) != len(references):
            raise ValueError(
                "Expected one reference per source. Received: "
                f"len(sources)={len(sources)}, len(references)={len(references)}"
            )
        self.sources = list(sources)
        self.references = list(references)
        self.tokenize_fn = tokenize_fn
        self.detokenize_fn = detokenize_fn
        self.target_language = target_language
        self.tokenize = bleu_tokenizer(target_language)
        self.every_n_steps = every_n_steps
        self.verbose = verbose
        self.batch_size = batch_size
        self.jit_compile = jit_compile
        self.config = (
            DecodingConfig(method="greedy")
            if config is None
            else check_decoding_config(config)
        )
        self.bos_id = bos_id
        self.eos_id = eos_id
        self.scores = []
        self._step = 0
        self._translate_fn = None

    def on_train_batch_end(self, batch, logs=None):
        self._step += 1
        if self._step % self.every_n_steps:
            return
        if self._translate_fn is None:
            self._translate_fn = compiled_translate(
                self.model,
                self.config,
                jit_compile=self.jit_compile,
                bos_id=self.bos_id,
                eos_id=self.eos_id,
            )
        hypotheses = translate_texts(
            self.model,
            self.sources,
            self.tokenize_fn,
            self.detokenize_fn,
            batch_size=self.batch_size,
            eos_id=self.eos_id,
            translate_fn=self._translate_fn,
        )
        result = score_translations(
            hypotheses,
            self.references,
            tokenize=self.tokenize,
            target_language=self.target_language,
        )
        self.scores.append((self._step, result["bleu"]))
        if logs is not None:
            logs["dev_bleu"] = result["bleu"]
            logs["dev_chrf"] = result["chrf"]
        if self.verbose:
            print(
                f"\nstep {self._step}: dev BLEU = {result['bleu']:.2f}, "
                f"chrF = {result['chrf']:.2f} ({len(hypotheses)} sentences)  "
                f"{result['bleu_signature']}"
            )
