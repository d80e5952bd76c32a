"""Named recipes: the paper's experiments (and the demo) as ready training jobs.

A `Recipe` binds everything a run needs that is not the machine's business:
the data source and splits, the tokenizer, the model preset, the batch budget,
the schedule, the checkpoint and averaging policy and the decoding settings.
The command line (`keras-transformer train --recipe wmt14_en_de_base`) reads
it; every value can be overridden (`--set warmup_steps=8000`).

What the paper states, and where (Vaswani et al., 2017):

| setting | value | section |
|---|---|---|
| En-De data | WMT 2014, 4.5M pairs, newstest2013 dev, newstest2014 test | §5.1, §6.1 |
| En-De vocabulary | shared byte-pair encoding, ~37,000 tokens | §5.1 |
| En-Fr data | WMT 2014, 36M sentences | §5.1 |
| En-Fr vocabulary | word-piece, 32,000 tokens | §5.1 |
| batch | ~25,000 source + 25,000 target tokens | §5.1 |
| hardware | 8 P100 GPUs | §5.2 |
| steps | base 100,000 (12 h), big 300,000 (3.5 days) | §5.2 |
| optimiser, schedule | Adam(0.9, 0.98, 1e-9), warmup 4,000 | §5.3 |
| label smoothing | 0.1 | §5.4 |
| dropout | base 0.1, big 0.3, big En-Fr 0.1 | §5.4, §6.1 |
| checkpoints | every 10 minutes; average last 5 (base), last 20 (big) | §6.1 |
| decoding | beam 4, alpha 0.6, max length input + 50 | §6.1 |
| Table 3 | En-De base settings, newstest2013, no averaging | §6.2 |

What the paper leaves open and the recipes choose: the maximum training
length (256 tokens, tensor2tensor's), the TFDS builders (`wmt14_translate`,
whose training data is the paper's WMT 2014 set; its `validation` split is
newstest2013 and `test` newstest2014), and SentencePiece BPE for both
vocabularies (the paper's En-Fr word-piece model is not public; `--set
tokenizer=wordpiece` selects ours). The `demo` recipe is ours, chosen by
measurement for ten minutes on two CPU cores (BUILD_NOTES.md).

The 25,000-token batch of the paper is the *effective* batch: with fewer
devices than the paper's eight, `runs.batching_plan` splits it over gradient
accumulation steps so that each device holds at most `max_tokens_per_replica`
tokens per side, and the schedule still counts the paper's updates.
"""

from keras_transformer.decoding.decoding_config import DecodingConfig
from keras_transformer.presets import PRESETS
from keras_transformer.recipe import (  # noqa: F401 (the public names)
    DATA_SOURCES,
    FILE_SPLITS,
    NESTED,
    ON_BAD_LINE,
    TASKS,
    TOKENIZERS,
    WSJ_SECTIONS,
    Recipe,
)


def _paper(name, description, **fields):
    return Recipe(name=name, description=description, **fields)


def _wsj_parsing(name, description, **fields):
    """A §6.3 parsing recipe on the WSJ of a Penn Treebank (`--treebank-dir`):
    beam 21, alpha 0.3, outputs up to input + 300."""
    return _paper(
        name,
        description,
        task="parsing",
        data_source="treebank",
        dataset=None,
        source_language="en",
        target_language=None,
        dev_split="dev",
        test_split="test",
        # Linearized trees are about 3x their sentences; outputs up to
        # input + 300 (§6.3) need the positions.
        model_overrides=(("max_position_length", 512),),
        max_train_length=512,
        decoding=DecodingConfig(
            beam_size=21, alpha=0.3, max_extra_length=300, constrain_brackets=True
        ),
        max_beam_size=21,
        **fields,
    )


def _table3(preset):
    description = PRESETS[preset]["description"]
    return _paper(
        f"wmt14_en_de_{preset}",
        f"{description} En-De, reported on newstest2013 without averaging (§6.2).",
        preset=preset,
        test_split="validation",
        average_last=1,
        keep_checkpoints=1,
    )


RECIPES = {
    recipe.name: recipe
    for recipe in (
        _paper(
            "wmt14_en_de_base",
            "Transformer base, WMT 2014 English-German: 27.3 BLEU in Table 2.",
        ),
        _paper(
            "wmt14_en_de_big",
            "Transformer big, WMT 2014 English-German: 28.4 BLEU in Table 2.",
            preset="big",
            keep_checkpoints=20,
            average_last=20,
        ),
        _paper(
            "wmt14_en_fr_big",
            "Transformer big, WMT 2014 English-French, dropout 0.1 (§6.1): "
            "41.8 BLEU in Table 2.",
            dataset="wmt14_translate/fr-en",
            target_language="fr",
            vocab_size=32_000,
            preset="big",
            model_overrides=(("dropout", 0.1),),
            keep_checkpoints=20,
            average_last=20,
        ),
        *(_table3(preset) for preset in PRESETS if preset.startswith("table3_")),
        _wsj_parsing(
            "wsj_parsing",
            "Transformer parser, WSJ only (§6.3): 4 layers, d_model 1024, 16K "
            "source vocabulary; 91.3 F1 on section 23 in Table 4. Needs "
            "--treebank-dir (LDC99T42).",
            vocab_size=16_000,
            preset="parsing_wsj",
        ),
        _wsj_parsing(
            "wsj_parsing_semi_supervised",
            "Transformer parser, semi-supervised (§6.3): WSJ plus extra trees, "
            "32K source vocabulary; 92.7 F1 on section 23 in Table 4. Needs "
            "--treebank-dir and --extra-trees (the paper's 17M-sentence "
            "high-confidence BerkeleyParser corpus is not public).",
            vocab_size=32_000,
            preset="parsing_semi_supervised",
        ),
        Recipe(
            name="demo",
            description=(
                "Small pre-norm Transformer on the bundled LibreOffice help, "
                "English-German, 2,400 updates (about ten minutes on two CPU "
                "cores; settings chosen by measurement, BUILD_NOTES.md)."
            ),
            data_source="bundled",
            dataset="libreoffice_help",
            dev_split="dev",
            test_split="test",
            vocab_size=4_000,
            tokenizer_sample_pairs=None,
            preset="base",
            model_overrides=(
                ("d_ff", 1024),
                ("d_model", 256),
                ("dropout", 0.0),
                ("normalize_first", True),
                ("num_heads", 4),
                ("num_layers", 2),
            ),
            tokens_per_batch=1_024,
            max_tokens_per_replica=1_024,
            max_train_length=96,
            # The paper's x1.1 buckets: with full batches across passes
            # (`BatchingConfig.endless`) they pad least
            # (docs/experiment-log.md, "Full batches across passes");
            # from length 2, as many of the help texts' pairs are menu names
            # a few tokens long (more target tokens/s, docs/experiment-log.md,
            # "Mixed-precision training").
            min_bucket_length=2,
            # A budget in updates, not minutes, so that every machine trains
            # the same model; the budget was sized for a short run on a
            # small CPU machine (time in docs/results.md, "Memory and time of
            # the demos").
            train_steps=2_400,
            warmup_steps=100,
            learning_rate_scale=0.32,
            # mixed_bfloat16 on CPUs with bfloat16 matmuls, float32 elsewhere:
            # the same BLEU at more tokens/s (docs/results.md,
            # "Quality" and "Training speed").
            precision="auto",
            steps_per_epoch=50,
            checkpoint_every_minutes=None,
            checkpoint_every_steps=200,
            keep_checkpoints=3,
            average_last=3,
        ),
        Recipe(
            name="gum_parsing",
            description=(
                "Small pre-norm Transformer parser on the bundled GUM trees "
                "(§6.3's task on silver CC BY trees, offline, `demo --task "
                "parsing`); d_model 256, 512-token batches, beam 4 "
                "instead of the paper's 21 for CPU decoding; the decoder sees "
                "the next word (`next_word_pointer`, the mean of its subwords) "
                "and its attention is biased by word distance from it, as the "
                "encoder's is between words (`next_word_window`, "
                "`encoder_word_window`); it predicts each word's tag "
                "(`tree_tags`), has one layer under a 4-layer encoder, and the "
                "search keeps brackets matched (BUILD_NOTES.md, Parsing)."
            ),
            task="parsing",
            data_source="bundled",
            dataset="gum",
            source_language="en",
            target_language=None,
            dev_split="dev",
            test_split="test",
            vocab_size=4_000,
            tokenizer_sample_pairs=None,
            preset="base",  # a small model, not §6.3's d 1024
            model_overrides=(
                ("d_ff", 1024),
                ("d_model", 256),
                ("dropout", 0.1),
                ("max_position_length", 512),
                ("next_word_pointer", True),
                # The mean of a word's subwords beats its first on dev F1
                # (docs/experiment-log.md, "The pointer's word vector, and
                # levers after it").
                ("next_word_pooling", "mean"),
                # Each cross-attention head learns a bias by word distance
                # from the next word, -3..3 (more dev F1 in two seeds;
                # docs/experiment-log.md, "Attention biased by word distance").
                ("next_word_window", 3),
                # And each encoder head one by word distance between pieces'
                # words, -8..8 (the same section).
                ("encoder_word_window", 8),
                ("normalize_first", True),
                ("num_encoder_layers", 4),
                ("num_heads", 4),
                # One decoder layer parses as well as two, and each decoding
                # step costs about half (docs/experiment-log.md, "Tags as
                # leaves and a shallow decoder").
                ("num_layers", 1),
            ),
            # Measured (docs/experiment-log.md, "Parsing"): 512-token batches beat
            # 2,048 (more updates in the budget); predicting the tags (scored
            # with the gold tags, as XX leaves are) beats XX leaves.
            tree_tags=True,
            tokens_per_batch=512,
            max_tokens_per_replica=512,
            max_train_length=512,
            bucket_scale=2.0,
            # In updates, as the demo: sized for a short run on a small CPU
            # machine (BUILD_NOTES.md, Parsing).
            train_steps=3_800,
            warmup_steps=1_000,
            # As the demo's: the same F1 at more tokens/s where it pays.
            precision="auto",
            steps_per_epoch=50,
            checkpoint_every_minutes=None,
            checkpoint_every_steps=300,
            keep_checkpoints=3,
            average_last=3,
            decoding=DecodingConfig(
                beam_size=4,
                alpha=0.3,
                max_extra_length=300,
                constrain_brackets=True,
                match_brackets=True,
            ),
        ),
    )
}


def get_recipe(name, **overrides):
    """The recipe called `name`, with optional field overrides.

    Raises:
        ValueError: unknown name or field, naming it.
    """
    if name not in RECIPES:
        raise ValueError(
            f"Unknown recipe; expected one of {sorted(RECIPES)}. Received: "
            f"recipe={name!r}"
        )
    recipe = RECIPES[name]
    return recipe.with_overrides(overrides) if overrides else recipe
