"""The first call of a loaded export, the way each Python caller makes it.

A SavedModel's signature is optimized by TensorFlow on its first call after
loading; a signature whose graph holds many searches (the `translate`
signature's switch over every beam size) prepares them all then. This
times, in a fresh process per caller and round (nothing cached from an
earlier load), the load and the first and second call of one sentence at
`--beam-size`, then the warm median of `--repeats` batches of `--batch`
sentences of the bundled test split:

- `translator`: `Translator.from_export(export).translate(...)`, the call
  `keras-transformer translate --export` makes;
- `translate`: the `translate` signature, the beam size as a tensor (alpha
  and the extra length the export's);
- `serving_default`: the export's own decoding (its beam size, which the
  JSON line names as `serving_default_beam_size`).

`--export` names an existing translation export (any version this package
wrote); `--make-export DIR` first writes one under DIR with
`serving_latency.py`'s model (its `small` config with random weights, or
`--run-dir`'s trained one) at `--beam-size` and `--max-beam-size` (8, the
recipes' default). `--rounds` fresh processes per caller, taken in turns;
each figure is the median over the rounds (the spread beside it). Each
process imports `serving_latency.py` for its sentences (which tunes glibc's
malloc as the command line does; `translate --export` imports less), before
the clock starts. Prints one JSON line.

    python benchmarks/export_first_call.py --make-export /tmp/first-call
    python benchmarks/export_first_call.py --export /tmp/first-call/1
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

CALLERS = ("translator", "translate", "serving_default")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--export")
    where.add_argument("--make-export", metavar="DIR")
    parser.add_argument("--run-dir", default=None)
    parser.add_argument("--max-beam-size", type=int, default=8)
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--callers", nargs="+", default=CALLERS, choices=CALLERS)
    parser.add_argument("--one", nargs=1, metavar="CALLER", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        return _one(args.export, args.one[0], args)
    if args.run_dir is not None and args.export is not None:
        parser.error("--run-dir goes with --make-export, not --export")
    export = args.export or _make_export(args)
    rounds = {caller: [] for caller in args.callers}
    for _ in range(args.rounds):
        for caller in args.callers:
            rounds[caller].append(_in_process(export, caller, args))
    from savedmodels.export_record import export_decoding

    figures = {
        "export": export,
        "beam_size": args.beam_size,
        "serving_default_beam_size": export_decoding(export).beam_size,
        "batch": args.batch,
    }
    for caller, results in rounds.items():
        if not results:  # --rounds 0: the export only
            continue
        for key in results[0]:
            values = [result[key] for result in results]
            figures[f"{caller}_{key}"] = round(statistics.median(values), 3)
            figures[f"{caller}_{key}_range"] = [min(values), max(values)]
    print(json.dumps(figures))


def _make_export(args):
    """Exports `serving_latency.py`'s model under `--make-export`."""
    from serving_latency import export_model

    from keras_transformer.decoding import DecodingConfig
    from savedmodels import export_translator

    model, tokenizer, max_input_length, _ = export_model(run_dir=args.run_dir)
    return export_translator(
        model,
        tokenizer,
        args.make_export,
        decoding=DecodingConfig(beam_size=args.beam_size),
        max_beam_size=args.max_beam_size,
        max_input_length=max_input_length,
    )


def _in_process(export, caller, args):
    """`_one` in a fresh Python process; its JSON line as a dict."""
    command = [sys.executable, __file__, "--export", export, "--one", caller]
    for name in ("beam_size", "batch", "repeats"):
        command += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{caller} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def _one(export, caller, args):
    """Loads `export` and times `caller`'s calls; prints a JSON line."""
    import tensorflow as tf
    from serving_latency import test_sentences

    from savedmodels.export_record import export_decoding

    sentences = test_sentences(args.batch + 1)
    decoding = export_decoding(export)
    start = time.perf_counter()
    if caller == "translator":
        from keras_transformer import Translator

        translator = Translator.from_export(export)

        def call(texts):
            return translator.translate(texts, beam_size=args.beam_size)

    else:
        import tensorflow_text  # noqa: F401  (the SavedModel's tokenizer ops)

        signature = tf.saved_model.load(export).signatures[caller]
        scalars = {}
        if caller == "translate":
            scalars = {
                "beam_size": tf.constant(args.beam_size),
                "alpha": tf.constant(decoding.alpha, tf.float32),
                "max_extra_length": tf.constant(decoding.max_extra_length),
                "n_best": tf.constant(1),
            }

        def call(texts):
            outputs = signature(text=tf.constant(texts), **scalars)
            return outputs["translations"].numpy()

    times = {"load_s": time.perf_counter() - start}
    for name in ("first_call_s", "second_call_s"):
        start = time.perf_counter()
        call(sentences[:1])
        times[name] = time.perf_counter() - start
    call(sentences[1:])  # the batch's shapes, untimed
    batch = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        call(sentences[1:])
        batch.append(time.perf_counter() - start)
    times["warm_batch_s"] = statistics.median(batch)
    print(json.dumps({key: round(value, 3) for key, value in times.items()}))


if __name__ == "__main__":
    main()
