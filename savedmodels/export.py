"""Export of the translator as a versioned SavedModel (TF Serving layout)."""

import json
import os
import shutil
import tempfile
from collections.abc import Mapping

import keras
import tensorflow as tf

from keras_transformer.training.atomic_files import publishing
from savedmodels.op_compatibility import (
    SERVING_TF_TEXT_VERSION,
    check_serving_ops,
    parse_tf_text_version,
)
from savedmodels.parser_module import ParserModule
from savedmodels.translator_module import TranslatorModule
from savedmodels.warmup import WARMUP_PATH, warmup_requests, write_warmup_file

RECORD_PATH = os.path.join("assets.extra", "record.json")


def export_translator(
    model,
    tokenizer,
    base_dir,
    version=None,
    overwrite=False,
    decoding=None,
    record=None,
    serving_tf_text_version=SERVING_TF_TEXT_VERSION,
    target_tokenizer=None,
    tree_tags=False,
    progress=False,
    **module_kwargs,
) -> str:
    """Writes `model` + `tokenizer` + beam search as `<base_dir>/<version>/`.

    The layout TF Serving watches: one integer-named SavedModel directory per
    version under `base_dir`. The export is written to a hidden temporary
    directory beside it and renamed into place, so a server polling `base_dir`
    never sees a half-written version. Beside the SavedModel,
    `assets.extra/record.json` holds the reproducibility record (model config,
    tokenizer fingerprint, decoding defaults, library versions and the given
    `record`), the tokenizer's files for readers outside TensorFlow
    (`asset_files()`: `sentencepiece.model`, or a Marian tokenizer's
    `source.spm`, `target.spm` and `vocab.json`), and
    `assets.extra/tf_serving_warmup_requests` the requests TF Serving
    replays when it loads the version (`savedmodels.warmup`: every
    signature, every beam size, and a single sentence per decoding buffer
    size), so that its first client does not wait for the functions' lazy
    initialization or a new buffer's kernel set-up. See `TranslatorModule`
    for the signatures. Before the version is published, `check_serving_ops` checks
    that stock TF Serving registers every op of the graph (BUILD_NOTES.md,
    "Export"); a failed check leaves no version behind.

    Args:
        model: a `keras_transformer.Transformer`.
        tokenizer: a `pipelines.SentencePieceTokenizer` with the model's
            vocabulary.
        base_dir: str or path. The model's directory, created if needed.
        version: positive int or `None`. The version to write; `None` takes the
            largest existing integer version + 1 (1 for the first).
        overwrite: bool. Replace an existing version. Defaults to `False`.
        decoding: a beam-search `DecodingConfig`, the settings of
            `serving_default` (and the defaults recorded for clients).
            Defaults to `DecodingConfig()`, the paper's (§6.1).
        record: optional JSON-serialisable dict, stored under `"record"` (e.g.
            the training checkpoint's record, BLEU signature, averaged steps).
        serving_tf_text_version: str or `None`. The tensorflow-text release
            linked into the target TF Serving build, for the op check (see
            `savedmodels.op_compatibility`); `None` skips the check. Defaults
            to `SERVING_TF_TEXT_VERSION`, the release TF Serving's sources pin.
        target_tokenizer: a parsing run's `pipelines.SymbolTokenizer`: the
            export is then a `ParserModule` (`parse` and `parse_beam_K`
            signatures, trees out,
            §6.3). Defaults to `None`, a translator.
        tree_tags: bool. The parsing run predicts POS tags, not `XX`.
        progress: bool. Name the stages and show a Keras progress bar over
            them (tracing the searches takes most of the time). Defaults to
            `False`.
        **module_kwargs: other `TranslatorModule` arguments
            (`max_beam_size`, `max_extra_length_limit`, `max_input_length`).

    Returns:
        The path of the written version directory.

    Raises:
        ValueError: not the TensorFlow backend, a bad `version`, the
            version exists and `overwrite` is `False`, or the graph has ops
            TF Serving would not register (the message names them).

    Examples:
        >>> path = export_translator(model, tokenizer, "exports/ende")
        >>> tf.saved_model.load(path).signatures["serving_default"](
        ...     text=tf.constant(["Hello world."]))["translations"]
    """
    if keras.backend.backend() != "tensorflow":
        raise ValueError(
            "SavedModel export needs the TensorFlow backend (set "
            "KERAS_BACKEND=tensorflow). "
            f"Received: backend={keras.backend.backend()}"
        )
    base_dir = os.fspath(base_dir)
    if version is None:
        version = _next_version(base_dir)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError(
            f"`version` must be a positive integer or None. Received: version={version}"
        )
    target = os.path.join(base_dir, str(version))
    if os.path.exists(target) and not overwrite:
        raise ValueError(
            "Refusing to overwrite an existing version; pass `overwrite=True`. "
            f"Received: base_dir={base_dir}, version={version}"
        )
    if record is not None:
        json.dumps(record)  # fail before the (slow) export, not after
    if serving_tf_text_version is not None:
        parse_tf_text_version(serving_tf_text_version)  # likewise

    if target_tokenizer is None:
        module = TranslatorModule(model, tokenizer, decoding=decoding, **module_kwargs)
    else:
        module = ParserModule(
            model,
            tokenizer,
            target_tokenizer,
            tags=tree_tags,
            decoding=decoding,
            **module_kwargs,
        )
    os.makedirs(base_dir, exist_ok=True)
    # Hidden (non-integer) name: TF Serving ignores it while it is written.
    staging = tempfile.mkdtemp(prefix=f".{version}-", dir=base_dir)
    try:
        # A failure (a full disk: `OSError(ENOSPC)` naming the version)
        # removes the staging directory; nothing is published.
        stages = ["trace the signatures", "write the SavedModel"]
        if serving_tf_text_version is not None:
            stages.append("check TF Serving's ops")
        bar = None
        if progress:
            print(f"Export stages: {', '.join(stages)}")
            bar = keras.utils.Progbar(len(stages), unit_name="stage")
        with publishing(staging, target):
            signatures = module.signatures()  # traces every search
            requests = warmup_requests(module)
            _keep_only_signatures(module)
            if bar is not None:
                bar.update(1)
            tf.saved_model.save(module, staging, signatures=signatures)
            if bar is not None:
                bar.update(2)
            if serving_tf_text_version is not None:
                check_serving_ops(staging, serving_tf_text_version)
                if bar is not None:
                    bar.update(3)
            extra = os.path.join(staging, "assets.extra")
            os.makedirs(extra, exist_ok=True)
            write_warmup_file(requests, os.path.join(staging, WARMUP_PATH))
            for name, content in tokenizer.asset_files().items():
                with open(os.path.join(extra, name), "wb") as file:
                    file.write(content)
            with open(os.path.join(staging, RECORD_PATH), "w") as file:
                written = _record(model, tokenizer, module, sorted(signatures), record)
                json.dump(written, file, indent=2)
        if os.path.exists(target):
            old = tempfile.mkdtemp(prefix=f".{version}-old-", dir=base_dir)
            os.replace(target, os.path.join(old, "previous"))
            os.replace(staging, target)
            shutil.rmtree(old)
        else:
            os.replace(staging, target)
    finally:
        if os.path.exists(staging):
            shutil.rmtree(staging)
    return target


def _next_version(base_dir):
    if not os.path.isdir(base_dir):
        return 1
    versions = [int(name) for name in os.listdir(base_dir) if name.isdigit()]
    return max(versions, default=0) + 1


def _keep_only_signatures(module):
    """Takes the module's `tf.function`s out of what `tf.saved_model.save`
    writes, once its signatures are traced.

    Kept (as attributes or in dicts: the searches, the signatures at one
    beam size), `save` would also store each as a function of the loaded object,
    tracing every search again in its save context (twice the tracing, a
    SavedModel about twice the size); nothing reads them: TF Serving,
    `saved_model_cli` and `Translator.from_export` call the signatures, which
    keep the traced searches, the tokenizers and the weights.
    """
    for name, value in list(vars(module).items()):
        if name.startswith("_self_"):  # the object graph's own bookkeeping
            continue
        values = value.values() if isinstance(value, Mapping) else [value]
        if any(
            isinstance(v, tf.types.experimental.PolymorphicFunction) for v in values
        ):
            delattr(module, name)


def _record(model, tokenizer, module, signature_names, record):
    import tensorflow_text

    target = getattr(module, "target_tokenizer", None)
    parsing = {}
    if target is not None:  # a parser (§6.3): its symbol vocabulary
        parsing["target_tokenizer"] = {
            "kind": target.kind,
            "fingerprint": target.fingerprint,
            "vocab_size": target.vocab_size,
        }
        parsing["tree_tags"] = module.tags
    return {
        **parsing,
        "model_config": model.get_config(),
        "tokenizer": {
            "kind": tokenizer.kind,
            "fingerprint": tokenizer.fingerprint,
            "vocab_size": tokenizer.vocab_size,
        },
        "decoding": {
            **module.decoding.to_dict(),
            "max_beam_size": module.max_beam_size,
            "max_extra_length_limit": module.max_extra_length_limit,
            "max_input_length": module.max_input_length,
            "max_buffer_length": module.max_buffer_length,
        },
        "signatures": signature_names,
        "versions": {
            "tensorflow": tf.__version__,
            "tensorflow_text": tensorflow_text.__version__,
            "keras": keras.__version__,
        },
        "record": record,
    }
