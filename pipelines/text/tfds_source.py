"""Parallel text from TensorFlow Datasets translation builders.

Any TFDS dataset whose examples are dicts keyed by language code works:
`wmt14_translate/de-en` and `wmt14_translate/fr-en` (the paper's WMT 2014
tasks), `wmt_t2t_translate`, `ted_hrlr_translate/...`, and so on.
"""

import tensorflow as tf


def load_tfds(
    name: str = "wmt14_translate/de-en",
    split: str = "train",
    source_language: str = "en",
    target_language: str = "de",
    data_dir: str | None = None,
    download: bool = True,
) -> tf.data.Dataset:
    """Loads a TFDS translation dataset as `(source, target)` string pairs.

    Args:
        name: str. TFDS name with config, e.g. `"wmt14_translate/fr-en"`.
            Defaults to `"wmt14_translate/de-en"`.
        split: str. A TFDS split expression (`"train"`, `"validation"`,
            `"test"`, `"train[:1%]"`, ...). Defaults to `"train"`.
        source_language: str. Feature key of the source side. Defaults to `"en"`.
        target_language: str. Feature key of the target side. Defaults to `"de"`.
        data_dir: str or `None`. Where TFDS keeps (or finds) prepared data.
        download: bool. Whether TFDS may download and prepare the data.
            Defaults to `True`.

    Returns:
        A `tf.data.Dataset` of `(source, target)` scalar `tf.string` pairs.
    """
    # Imported on use: `translate` and `parse` import `pipelines` and never
    # read TFDS, whose import is a noticeable part of their start-up
    # (BUILD_NOTES.md, "Whole-process parse and translate").
    import tensorflow_datasets as tfds

    builder = tfds.builder(name, data_dir=data_dir)
    keys = sorted(builder.info.features.keys())
    for argument, language in (
        ("source_language", source_language),
        ("target_language", target_language),
    ):
        if language not in keys:
            raise ValueError(
                f"Dataset {name!r} has the languages {keys}. "
                f"Received: {argument}={language!r}"
            )
    if source_language == target_language:
        raise ValueError(
            "source_language and target_language must differ. Received: "
            f"source_language={source_language!r}, "
            f"target_language={target_language!r}"
        )
    if download:
        builder.download_and_prepare()
    dataset = builder.as_dataset(split=split, shuffle_files=False)
    return dataset.map(
        lambda example: (example[source_language], example[target_language]),
        num_parallel_calls=tf.data.AUTOTUNE,
    )
