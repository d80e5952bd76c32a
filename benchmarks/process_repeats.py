"""Repeats a benchmark script in fresh processes and keeps the median one.

On the 2-core development machine a process's speed lands on one of a few
levels and stays there (BUILD_NOTES.md, "Measuring on this machine"), so one
process is one sample. `print_median_process` runs the script `processes`
times, one after another, and prints for every setting the record of the
process with the median `metric`, plus every process's value and the best.
"""

import json
import statistics
import subprocess
import sys


def add_processes_argument(parser):
    """Adds `--processes N` (default 1) to an `argparse` parser."""
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="Fresh processes per setting; the median one is printed.",
    )


def repeat_in_processes(script, processes, metric):
    """With `processes` > 1, reruns `script` with this command line in that
    many processes (`print_median_process`) and returns True."""
    if processes <= 1:
        return False
    argv = sys.argv[1:]
    at = argv.index("--processes")
    del argv[at : at + 2]
    print_median_process(script, argv, processes, metric)
    return True


def print_median_process(script, argv, processes, metric, lower_is_better=True):
    """Runs `python script *argv --processes 1` `processes` times.

    Args:
        script: path of the benchmark script.
        argv: its other command-line arguments.
        processes: int. How many fresh processes.
        metric: the JSON field to rank processes by, per setting.
        lower_is_better: bool. Whether a low `metric` is good (seconds).
    """
    runs = []
    for _ in range(processes):
        output = subprocess.run(
            [sys.executable, script, *argv, "--processes", "1"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        runs.append(
            [json.loads(line) for line in output.splitlines() if line[:1] == "{"]
        )
    for records in zip(*runs, strict=True):
        ranked = sorted(records, key=lambda record: record[metric])
        median = ranked[(len(ranked) - 1) // 2]
        best = ranked[0] if lower_is_better else ranked[-1]
        summary = dict(median)
        summary["processes"] = processes
        summary[f"{metric}_median"] = statistics.median(r[metric] for r in records)
        summary[f"{metric}_best"] = best[metric]
        summary[f"{metric}_per_process"] = [record[metric] for record in records]
        print(json.dumps(summary), flush=True)
