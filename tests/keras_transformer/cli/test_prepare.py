import pipelines
from keras_transformer.cli.prepare import prepare
from keras_transformer.recipes import get_recipe
from tests.keras_transformer.cli.conftest import TINY


def tiny_recipe():
    overrides = {}
    for pair in TINY:
        key, _, value = pair.partition("=")
        overrides[key] = None if value == "null" else value
    for key in ("vocab_size", "tokens_per_batch", "max_tokens_per_replica"):
        overrides[key] = int(overrides[key])
    for key in (
        "steps_per_epoch",
        "checkpoint_every_steps",
        "warmup_steps",
        "decoding.beam_size",
        "max_beam_size",
    ):
        overrides[key] = int(overrides[key])
    for key in ("model.num_layers", "model.d_model", "model.d_ff", "model.num_heads"):
        overrides[key] = int(overrides[key])
    return get_recipe("demo", **overrides)


def test_prepare_writes_tokenizer_and_cache_and_reuses_them(tmp_path):
    recipe = tiny_recipe()
    (tmp_path / "data").mkdir()
    stale = tmp_path / "data" / "train.partial.index"
    stale.write_text("left by an interrupted prepare")
    run = prepare(recipe, str(tmp_path), verbose=0)
    assert not stale.exists()
    tokenizer = pipelines.load_tokenizer(run.tokenizer_path)
    assert tokenizer.vocab_size == 600
    assert (tmp_path / "data" / "train.index").exists()
    assert not list((tmp_path / "data").glob("*partial*"))
    modified = (tmp_path / "tokenizer.model").stat().st_mtime_ns
    prepare(recipe, str(tmp_path), verbose=0)
    assert (tmp_path / "tokenizer.model").stat().st_mtime_ns == modified
