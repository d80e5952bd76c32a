"""What `keras-transformer demo` prints at its end, from its `report.json`
(`run_demo`): the export's outputs for a few test sentences, the scores
beside their baselines or signatures, the time per phase and the files
written."""

import os

from keras_transformer.training.training_progress import format_seconds


def print_report(recipe, report, output):
    """Prints the examples, then a short table: scores, time per phase,
    files."""
    print(f"\n== results: {len(report['examples'])} test sentences by the export\n")
    if report["task"] == "parsing":
        for example in report["examples"]:
            print(f"IN:  {example['sentence']}")
            print(f"OUT: {example['tree']}")
            print(f"REF: {example['reference']}\n")
        baselines = report["baselines"]
        scores = [
            ("F1", report["f1"], "EVALB-compatible (COLLINS.prm), gold tags on leaves"),
            ("flat F1", baselines["flat"]["f1"], "baseline"),
            ("right-branching F1", baselines["right_branching"]["f1"], "baseline"),
        ]
        if report.get("f1_predicted_tags") is not None:
            scores[1:1] = [
                ("F1, predicted tags", report["f1_predicted_tags"], "errors as 0"),
                ("tagging accuracy", report["tagging_accuracy"], "predicted tags"),
            ]
    else:
        source, target = (
            (language or side).upper()
            for language, side in (
                (recipe.source_language, "src"),
                (recipe.target_language, "out"),
            )
        )
        for example in report["examples"]:
            print(f"{source}:".ljust(5) + example["source"])
            print(f"{target}:".ljust(5) + example["translation"])
            print(f"REF: {example['reference']}\n")
        scores = [
            ("BLEU", report["bleu"], report["bleu_signature"]),
            ("chrF", report["chrf"], report["chrf_signature"]),
        ]
    split = f"{report['test_split']} split, {report['test_sentences']:,} sentences"
    print(f"Scores ({report['corpus']}, {split}, averaged weights):")
    width = max(len(name) for name, _, _ in scores)
    for name, value, note in scores:
        print(f"  {name.ljust(width)}  {value:6.2f}  {note}")
    if report["task"] == "parsing":
        print("  (GUM's silver trees: not comparable with WSJ section 23.)")
    print("Time:")
    labels = {"train": f"train ({report['steps']:,} updates, {report['precision']})"}
    rows = [
        (labels.get(name, name), seconds)
        for name, seconds in report["phase_seconds"].items()
    ]
    rows.append(("total", report["wall_seconds"]))
    width = max(len(label) for label, _ in rows)
    for label, seconds in rows:
        print(f"  {label.ljust(width)}  {format_seconds(seconds):>7}")
    eval_file = os.path.join(output, "eval", report["test_split"])
    written = [
        ("checkpoints", report["checkpoints"]),
        ("averaged weights", report["averaged_weights"]),
        ("evaluation", f"{eval_file}.json, {eval_file}.txt"),
        ("SavedModel", report["export"]),
        *report["pictures"].items(),
        ("report", os.path.join(output, "report.json")),
        ("TensorBoard logs", os.path.join(output, "logs")),
    ]
    print(f"Wrote {output}/:")
    width = max(len(label) for label, _ in written)
    for label, path in written:
        print(f"  {label.replace('_', ' ').ljust(width)}  {path}")
