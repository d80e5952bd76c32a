"""`keras-transformer train`: a recipe trained with `model.fit`, resumable."""

import contextlib
import dataclasses
import os
import time

import pipelines
from keras_transformer.models.builder import build_transformer
from keras_transformer.precisions import resolve_precision
from keras_transformer.runs.batching_plan import batching_plan
from keras_transformer.runs.loaded_run import load_fitting_weights
from keras_transformer.runs.prepare import prepare
from keras_transformer.runs.run_directory import RunDirectory, exclusion_hint
from keras_transformer.runs.run_lock import run_lock
from keras_transformer.runs.run_tokenizer import (
    load_run_tokenizer,
    load_target_tokenizer,
)
from keras_transformer.runs.training_cache import read_cache
from keras_transformer.runs.user_error import UserError
from keras_transformer.training import (
    XlaCompileLog,
    compile_transformer,
    fit_resumable,
    has_accelerator,
    is_chief,
    make_strategy,
    planned_updates,
    resolve_jit_compile,
    use_compilation_cache,
    worker_count,
)
from keras_transformer.training.corrupt_file_error import check_weights_file
from keras_transformer.training.step_counter import optimizer_step


def checkpoint_record(
    recipe, tokenizer, model, strategy_name, replicas, plan, target_tokenizer=None
):
    """What `RotatingCheckpoints` writes beside each checkpoint."""
    config, accumulation = plan
    tokens_per_step = config.tokens_per_batch
    return {
        "recipe": recipe.name,
        "task": recipe.task,
        "target_tokenizer_fingerprint": (
            target_tokenizer.fingerprint if target_tokenizer else None
        ),
        "model_config": model.get_config(),
        "tokenizer_fingerprint": tokenizer.fingerprint,
        "effective_batch_tokens": tokens_per_step * accumulation,
        "gradient_accumulation_steps": accumulation,
        "strategy": strategy_name,
        "replicas": replicas,
        "precision": recipe.precision,
    }


def compile_recipe(model, recipe, accumulation=1, jit_compile="auto"):
    """`compile_transformer` with the recipe's loss and schedule settings."""
    return compile_transformer(
        model,
        label_smoothing=recipe.effective_label_smoothing,
        warmup_steps=recipe.warmup_steps,
        learning_rate_scale=recipe.learning_rate_scale,
        gradient_accumulation_steps=accumulation if accumulation > 1 else None,
        jit_compile=jit_compile,
    )


def train(
    recipe,
    run_dir,
    strategy="default",
    verbose=0,
    jit_compile="auto",
    callbacks=None,
):
    """Trains `recipe` in `run_dir`; run it again to resume after a kill.

    Prepares the run first if needed. Trains for `recipe.total_train_steps`
    updates or `recipe.train_minutes`, whichever comes first, with the paper's
    optimiser, schedule and loss (§5.3, §5.4), rotating checkpoints and a
    backup every `recipe.steps_per_epoch` batches.

    With several workers (`"multi_worker"`) every worker runs this with the
    same `run_dir` on a file system they share: the chief prepares the run
    while the others wait for it, every worker reads the backup when resuming,
    and only the chief writes (see `fit_resumable`). A time budget is refused
    there (`fit_resumable`): set `train_minutes` to `None`.

    Args:
        recipe: a `Recipe`.
        run_dir: str. The run directory.
        strategy: str. A `make_strategy` name. Defaults to `"default"`.
        verbose: int. `model.fit` verbosity (0, 1 progress bar, 2 per epoch).
        jit_compile: XLA for the train step: bool, or `"auto"` (on with a GPU
            or TPU, off on CPUs: `resolve_jit_compile`). Defaults to `"auto"`.
            Under XLA the batches take static shapes (each side padded to its
            bucket length, partial batches filled with empty rows: one shape
            per bucket pair, counted and printed first) and compiled steps
            are kept in `RUN_DIR/xla_cache/`, so a resumed or repeated run
            loads them instead of compiling again (`XlaCompileLog` reports
            compilations and their time).
        callbacks: more Keras callbacks for `model.fit` (e.g. timing).

    Returns:
        A dict: `steps` (updates done in all), `history` (this call's
        `History.history`, empty if the run was already complete), the model.
    """
    # First: a multi-worker strategy must exist before any other TensorFlow
    # work (it configures the collective ops of the runtime).
    distribution = make_strategy(strategy)
    workers = worker_count(distribution)
    if workers > 1 and recipe.train_minutes is not None:
        raise UserError(
            f"A time budget needs one worker ({workers} workers could stop at "
            "different epochs): use --set train_minutes=null. Received: "
            f"train_minutes={recipe.train_minutes}"
        )
    # One writer per run directory; a multi-worker run's workers share it
    # on purpose, and only the chief writes (cli.run_lock).
    chief = is_chief(distribution)
    jit_compile = resolve_jit_compile(jit_compile)
    # Before any other TensorFlow function runs: TensorFlow reads the cache
    # flag once, when the process runs its first function (the preparation's
    # tf.data functions included).
    cache_dir = (
        use_compilation_cache(os.path.join(run_dir, "xla_cache"))
        if jit_compile
        else None
    )
    with run_lock(run_dir) if chief else contextlib.nullcontext():
        return _train(
            recipe,
            run_dir,
            distribution,
            chief,
            strategy,
            verbose,
            cache_dir,
            list(callbacks or []),
        )


def set_word_vocabularies(model, tokenizer, target_tokenizer, recipe):
    """Sets the next-word pointer's tables (a parsing model with
    `next_word_pointer`) from the run's tokenizers: the source pieces that
    start a word and the target's word symbols (`XX`, or the tags)."""
    if model.pointer is None:
        return
    leaves, _, _ = pipelines.symbol_classes(
        target_tokenizer.vocabulary, tags=recipe.tree_tags
    )
    try:
        word_starts = tokenizer.word_start_ids()
    except NotImplementedError as error:
        raise UserError(f"next_word_pointer: {error}") from None
    model.set_word_vocabularies(word_starts, leaves)


def _train(
    recipe, run_dir, distribution, chief, strategy, verbose, cache_dir, callbacks
):
    jit_compile = cache_dir is not None
    if chief:
        run = prepare(recipe, run_dir, verbose=min(verbose, 1))
    else:
        run = wait_until_prepared(run_dir, verbose=verbose)
    tokenizer = load_run_tokenizer(run, recipe.seed)
    target_tokenizer = load_target_tokenizer(run, recipe)
    # The precision this process trains in (the run's recipe.json keeps
    # "auto", resolved again on each machine); checkpoints record it.
    accelerator = has_accelerator()
    precision = resolve_precision(recipe.precision, accelerator)
    recipe = dataclasses.replace(recipe, precision=precision)
    replicas = distribution.num_replicas_in_sync
    plan = batching_plan(recipe, replicas, static=jit_compile or strategy == "tpu")
    config, accumulation = plan
    tokens_per_step = config.tokens_per_batch
    dataset = pipelines.batch_tokenized(read_cache(run), config)
    if jit_compile:
        callbacks.insert(0, XlaCompileLog(cache_dir, verbose=bool(verbose)))
        if verbose:
            shapes = pipelines.batch_shapes(read_cache(run), config)
            common = sorted(shapes, key=shapes.get, reverse=True)[:4]
            print(
                f"XLA: {len(shapes)} batch shapes (batch x source+target, each "
                "side padded to its bucket length), each compiled once, then "
                f"loaded from {cache_dir}; the commonest, with batches per "
                "epoch: " + ", ".join(f"{shape} ({shapes[shape]})" for shape in common)
            )
    if verbose and recipe.precision == "mixed_float16" and not accelerator:
        print(
            "Precision mixed_float16 on a machine without a GPU: float16 "
            "matmuls are slow on CPUs; mixed_bfloat16 suits CPUs with AVX-512 "
            "BF16 or AMX."
        )
    with distribution.scope():
        # The recipe's precision is the model's dtype policy: float32
        # variables, and a loss-scaling optimiser under mixed_float16.
        model = build_transformer(
            recipe.model_config(
                tokenizer.vocab_size,
                target_tokenizer.vocab_size if target_tokenizer else None,
            ),
            dtype=recipe.precision,
        )
        compile_recipe(model, recipe, accumulation, jit_compile)
    set_word_vocabularies(model, tokenizer, target_tokenizer, recipe)
    if os.path.exists(run.imported_weights):
        # Fine-tuning an imported model starts from its weights (a resumed
        # run's backup then replaces them, `fit_resumable`).
        check_weights_file(
            run.imported_weights, hint=exclusion_hint(run.imported_weights)
        )
        load_fitting_weights(model, run.imported_weights, f"imported {recipe.name}")
        if verbose:
            print(f"Fine-tuning the imported weights {run.imported_weights}")
    total_steps = recipe.total_train_steps * accumulation  # batches
    if verbose:
        print(
            f"Training {recipe.name}: {model.count_params():,} parameters, "
            f"{replicas} replica(s), {recipe.precision}, "
            f"{tokens_per_step} tokens per batch x "
            f"{accumulation} accumulation step(s), up to "
            f"{planned_updates(total_steps, recipe.steps_per_epoch, accumulation)} "
            "updates"
            + (f" or {recipe.train_minutes} minutes" if recipe.train_minutes else "")
        )
    history = fit_resumable(
        model,
        dataset,
        total_steps=total_steps,
        output_dir=run.path,
        steps_per_epoch=recipe.steps_per_epoch,
        checkpoint_every_steps=recipe.checkpoint_every_steps,
        checkpoint_every_minutes=recipe.checkpoint_every_minutes,
        keep_checkpoints=recipe.keep_checkpoints,
        record=checkpoint_record(
            recipe, tokenizer, model, strategy, replicas, plan, target_tokenizer
        ),
        verbose=verbose,
        max_minutes=recipe.train_minutes,
        callbacks=callbacks,
    )
    steps = optimizer_step(model)
    if verbose:
        print(f"Checkpoints: {os.path.join(run.path, 'checkpoints')} (step {steps})")
    return {
        "steps": steps,
        "precision": precision,
        "history": history.history if history is not None else {},
        "model": model,
    }


def wait_until_prepared(
    run_dir, timeout_minutes=24 * 60.0, poll_seconds=2.0, verbose=1
):
    """Waits for another process (the chief worker) to `prepare` `run_dir`.

    The run is prepared when its filter report exists: `prepare` writes it
    last, after the tokenizer and the complete cache.

    Returns:
        The `RunDirectory`.

    Raises:
        UserError: if it is not prepared within `timeout_minutes`.
    """
    run = RunDirectory(run_dir)
    report = run.filter_report_path
    start = time.monotonic()
    last_message = None
    while not os.path.exists(report):
        waited = time.monotonic() - start
        if waited > 60.0 * timeout_minutes:
            raise UserError(
                f"The chief worker did not prepare {run_dir} within "
                f"{timeout_minutes} minutes (no {report}). Is --run-dir on a file "
                "system that all workers share?"
            )
        if verbose and (last_message is None or waited - last_message >= 60.0):
            print(f"Waiting for the chief worker to prepare {run_dir}")
            last_message = waited
        time.sleep(poll_seconds)
    return run
