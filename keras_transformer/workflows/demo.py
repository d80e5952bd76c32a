"""`keras-transformer demo`: the whole life cycle on the bundled corpus.

Train a small Transformer on the bundled LibreOffice help (English -> German)
for a fixed number of updates, average the last checkpoints (§6.1), score the
test split with sacreBLEU (beam 4, alpha 0.6, §6.1), export the SavedModel and
translate a few test sentences through its `serving_default` signature. With
`--task parsing` the same on the bundled GUM trees (§6.3, `gum_parsing`): F1
beside the flat and right-branching baselines, sentences parsed by the export.
Everything runs offline on the data shipped with the package.
"""

import contextlib
import dataclasses
import os
import shutil
import time

import keras

import pipelines
from keras_transformer.runs.average import average
from keras_transformer.runs.prepare import prepare
from keras_transformer.runs.run_data import read_texts
from keras_transformer.runs.run_directory import RunDirectory
from keras_transformer.runs.train import train
from keras_transformer.training import LearningCurveLog, read_learning_curve
from keras_transformer.training.atomic_files import atomic_write_json
from keras_transformer.workflows.evaluate_run import evaluate
from keras_transformer.workflows.export_run import export

# `demo --task`: the recipe each task runs.
DEMO_RECIPES = {"translation": "demo", "parsing": "gum_parsing"}
# A parsing demo's scores in its report (`evaluate`'s, rounded).
PARSING_SCORES = "f1 f1_len_40 recall precision f1_predicted_tags tagging_accuracy"


def run_demo(
    recipe,
    output,
    test_sentences=None,
    examples=5,
    verbose=0,
    dev_sentences=200,
):
    """Runs the demo recipe in `output` and writes `output/report.json`:
    trains for the recipe's updates (`train_steps`; the same model on any
    machine) or its `train_minutes` when set. A second call with the same
    `output` resumes training from the backup for the recipe's updates again,
    then evaluates and exports again (a new export version). Besides the
    report it writes `learning_curve.png` (training loss, and greedy dev
    BLEU, or F1 for parsing, at every checkpoint: `learning_curve.jsonl`)
    and, for translation, `attention.png` (the encoder-decoder attention of
    the example nearest ten words). `phase_seconds`: each phase's time.

    Args:
        recipe: a `Recipe` (normally `get_recipe("demo")`).
        output: str. The run directory.
        test_sentences: int or `None`. Score only the first N test sentences.
        examples: int. Test sentences the reloaded export translates.
        verbose: int.
        dev_sentences: int. Dev sentences scored at each checkpoint for the
            learning curve (a fifth as many trees for parsing), `0` for none.

    Returns:
        The report dict.
    """
    start = time.monotonic()
    _start_afresh_if_older(recipe, output, verbose)
    phases = {}
    with _phase(phases, "prepare", verbose):
        prepare(recipe, output, verbose=verbose)
    curve_path = os.path.join(output, "learning_curve.jsonl")
    with _phase(phases, "train", verbose):
        callbacks = _learning_curve_callbacks(recipe, output, curve_path, dev_sentences)
        trained = train(recipe, output, verbose=verbose, callbacks=callbacks)
    history = trained["history"]
    with _phase(phases, "average", verbose):
        averaged = average(output, verbose=verbose)
    with _phase(phases, "evaluate", verbose):
        scores = evaluate(
            output, weights=averaged, limit=test_sentences, verbose=verbose
        )
    with _phase(phases, "export", verbose):
        export_path = export(output, weights=averaged, verbose=verbose)

    import tensorflow_text  # noqa: F401  (the SavedModel's tokenizer ops)

    with _phase(phases, "reload and run the export", verbose):
        if recipe.task == "parsing":
            report = _parsing_report(
                recipe, scores, test_sentences, examples, export_path
            )
        else:
            report = _translation_report(recipe, scores, examples, export_path)
    with _phase(phases, "pictures", verbose):
        pictures = _pictures(recipe, output, curve_path, averaged, report)
    rates = history.get("tokens_per_second", [])
    report |= {
        "steps": trained["steps"],
        "precision": trained["precision"],  # the recipe's, "auto" resolved
        "parameters": trained["model"].count_params(),
        "train_tokens_per_second": round(sum(rates) / len(rates), 1) if rates else None,
        "train_steps": recipe.total_train_steps,
        "train_minutes": recipe.train_minutes,
        "phase_seconds": {name: round(seconds, 1) for name, seconds in phases.items()},
        "wall_seconds": round(time.monotonic() - start, 1),
        "checkpoints": os.path.join(output, "checkpoints"),
        "averaged_weights": averaged,
        "export": export_path,
        "pictures": pictures,
        "recipe": {
            key: value
            for key, value in dataclasses.asdict(recipe).items()
            if key != "description"
        },
    }
    atomic_write_json(report, os.path.join(output, "report.json"))
    return report


def _start_afresh_if_older(recipe, output, verbose):
    """Removes `output` when it holds a demo run whose fixed settings differ
    from `recipe`'s (an older version's demo, or other `--set` options): a
    demo is disposable, so it starts afresh instead of being refused as a
    user's run is (`RunDirectory.write_recipe`). Says so in one line when
    `verbose`."""
    run = RunDirectory(output)
    if not os.path.exists(run.recipe_path):
        return
    stored = run.read_recipe()
    changes = run.fixed_field_changes(recipe)
    if stored.name not in DEMO_RECIPES.values() or not changes:
        return
    if verbose:
        print(
            f"{output} holds a demo run with other settings ({changes}); "
            "starting the demo afresh there."
        )
    shutil.rmtree(output)


@contextlib.contextmanager
def _phase(phases, name, verbose):
    """Times the block into `phases[name]`, announcing it first."""
    if verbose:
        print(f"\n== {name}")
    begin = time.monotonic()
    yield
    phases[name] = time.monotonic() - begin


def _learning_curve_callbacks(recipe, output, curve_path, dev_sentences):
    """Greedy dev BLEU (translation) or greedy dev F1 (parsing, on a fifth
    of `dev_sentences`: a parse is dearer) and the curve's log, every
    checkpoint."""
    every = recipe.checkpoint_every_steps or recipe.steps_per_epoch
    callbacks = []
    if recipe.task == "translation" and dev_sentences:
        sources, references = read_texts(recipe, recipe.dev_split, dev_sentences)
        callbacks.append(
            _DevBleu(recipe, output, sources, references, every_n_steps=every)
        )
    if recipe.task == "parsing" and dev_sentences:
        callbacks.append(
            _DevF1(recipe, output, max(1, dev_sentences // 5), every_n_steps=every)
        )
    return [
        *callbacks,
        LearningCurveLog(curve_path, every, loss_every_n_steps=recipe.steps_per_epoch),
    ]


class _DevF1(keras.callbacks.Callback):
    """Greedy parses of the first dev trees every `every_n_steps` updates,
    their F1 (`bracket_scores`) added to the logs as `dev_f1`. The recipe's
    bracket constraint applies; the tokenizers load and the search compiles
    (graph mode, once) when training begins (see `_DevBleu`)."""

    def __init__(self, recipe, output, count, every_n_steps):
        super().__init__()
        from keras_transformer.runs.run_data import split_trees

        self._recipe, self._output = recipe, output
        self._gold = split_trees(recipe, recipe.dev_split)[0][:count]
        self._every = every_n_steps
        self._config = dataclasses.replace(recipe.decoding, method="greedy", n_best=1)
        self._loaded = self._search = None
        self._last = None

    def on_train_begin(self, logs=None):
        from keras_transformer.parsing.parse_search import parser_search
        from keras_transformer.runs.loaded_run import LoadedRun
        from keras_transformer.runs.run_tokenizer import load_target_tokenizer

        run = RunDirectory(self._output)
        # The model in training, with the run's tokenizers (no weights file).
        self._loaded = LoadedRun(
            run,
            self._recipe,
            pipelines.load_tokenizer(run.tokenizer_path),
            load_target_tokenizer(run, self._recipe),
            self.model,
            None,
        )
        self._search = parser_search(self._loaded, self._config)

    def on_train_batch_end(self, batch, logs=None):
        from keras_transformer.parsing.bracket_scoring import bracket_scores
        from keras_transformer.parsing.parse_search import parse_sentences
        from keras_transformer.training.step_counter import optimizer_step

        # Once per checkpoint (the step repeats under gradient accumulation)
        step = optimizer_step(self.model)
        if logs is None or step == 0 or step % self._every or step == self._last:
            return
        self._last = step
        trees, _ = parse_sentences(
            self._loaded,
            [" ".join(tree.words()) for tree in self._gold],
            self._config,
            translate_fn=self._search,
        )
        logs["dev_f1"] = bracket_scores(self._gold, trees)["f1"]


class _DevBleu(keras.callbacks.Callback):
    """`BleuCallback` on a dev sample, with the run's tokenizer loaded when
    training begins: `train` loads its own first, and its seeding would free
    the resources of a tokenizer loaded before (`load_run_tokenizer`)."""

    def __init__(self, recipe, output, sources, references, every_n_steps):
        super().__init__()
        self._arguments = (recipe, output, sources, references, every_n_steps)
        self._bleu = None

    def on_train_begin(self, logs=None):
        from keras_transformer.evaluation import BleuCallback
        from keras_transformer.runs.run_tokenizer import detokenize_fn, source_ids_fn

        recipe, output, sources, references, every_n_steps = self._arguments
        tokenizer = pipelines.load_tokenizer(RunDirectory(output).tokenizer_path)
        self._bleu = BleuCallback(
            sources,
            references,
            source_ids_fn(tokenizer, recipe.max_train_length),
            detokenize_fn(tokenizer),
            target_language=recipe.target_language,
            every_n_steps=every_n_steps,
            verbose=False,
            # Graph mode: on CPUs the faster decoding path (BUILD_NOTES.md).
            jit_compile=False,
        )
        self._bleu.set_model(self.model)

    def on_train_batch_end(self, batch, logs=None):
        self._bleu.on_train_batch_end(batch, logs)


def _pictures(recipe, output, curve_path, averaged, report):
    """`learning_curve.png`, and `attention.png` of one example (the
    encoder-decoder attention of the last layer, over the greedy
    translation)."""
    from keras_transformer.visualization import plot_learning_curve

    pictures = {}
    rows = read_learning_curve(curve_path)
    if rows:
        pictures["learning_curve"] = plot_learning_curve(
            rows,
            os.path.join(output, "learning_curve.png"),
            title=f"{recipe.name}: {report['corpus']}",
        )
    if recipe.task == "translation" and report["examples"]:
        from keras_transformer.translation.attention_plot import attention

        # The example nearest ten words: a picture that can still be read.
        source = min(
            (example["source"] for example in report["examples"]),
            key=lambda text: abs(len(text.split()) - 10),
        )
        pictures["attention"], _ = attention(
            output,
            source,
            os.path.join(output, "attention.png"),
            weights=averaged,
            verbose=0,
        )
    return pictures


def _picks(count, examples):
    """`examples` indices evenly spaced over `count` (not picked by hand)."""
    if examples <= 0:
        return []
    return [k * count // examples + count // (2 * examples) for k in range(examples)]


def _translation_report(recipe, scores, examples, export_path):
    import tensorflow as tf

    # Evenly spaced over the test split (it is in page order), not picked.
    all_sources, all_references = read_texts(recipe, recipe.test_split)
    picks = _picks(len(all_sources), examples)
    sources = [all_sources[i] for i in picks]
    references = [all_references[i] for i in picks]
    served = tf.saved_model.load(export_path).signatures["serving_default"]
    translations = served(text=tf.constant(sources))["translations"].numpy()
    shown = [
        {"source": s, "reference": r, "translation": t[0].decode("utf-8")}
        for s, r, t in zip(sources, references, translations, strict=True)
    ]
    return {
        "task": "translation",
        "corpus": f"{recipe.dataset} {recipe.source_language}-{recipe.target_language}",
        "test_split": recipe.test_split,
        "test_sentences": scores["sentences"],
        "bleu": round(scores["bleu"], 2),
        "bleu_signature": scores["bleu_signature"],
        "chrf": round(scores["chrf"], 2),
        "chrf_signature": scores["chrf_signature"],
        "examples": shown,
    }


def _parsing_report(recipe, scores, test_sentences, examples, export_path):
    import tensorflow as tf

    from keras_transformer.parsing.bracket_scoring import baseline_scores
    from keras_transformer.runs.run_data import split_trees

    gold, _ = split_trees(recipe, recipe.test_split)
    gold = gold[:test_sentences] if test_sentences else gold
    picks = _picks(len(gold), examples)
    sentences = [" ".join(gold[i].words()) for i in picks]
    served = tf.saved_model.load(export_path).signatures["serving_default"]
    trees = served(text=tf.constant(sentences, tf.string))["trees"].numpy()
    shown = [
        {"sentence": s, "reference": str(gold[i]), "tree": t.decode("utf-8")}
        for s, i, t in zip(sentences, picks, trees, strict=True)
    ]
    return {
        "task": "parsing",
        "corpus": f"{recipe.dataset} (silver trees)",
        "test_split": recipe.test_split,
        "test_sentences": scores["sentences"],
        # The last two: EVALB with the tags a `tree_tags` run predicts.
        **{
            key: None if scores[key] is None else round(scores[key], 2)
            for key in PARSING_SCORES.split()
        },
        "repaired_outputs": scores["repaired_outputs"],
        "baselines": baseline_scores(recipe, gold),
        "examples": shown,
    }
