"""`keras-transformer average`: the mean of the last checkpoints (§6.1)."""

import os

from keras_transformer.runs.run_directory import RunDirectory, exclusion_hint
from keras_transformer.runs.user_error import UserError
from keras_transformer.training import checkpoint_step, record_path
from keras_transformer.training.atomic_files import atomic_write_json, read_json
from keras_transformer.training.corrupt_file_error import check_weights_file
from keras_transformer.validation import check_positive_int


def average(run_dir, last=None, verbose=0):
    """Averages the last `last` checkpoints of a run into `averaged/`.

    "For the base models, we used a single model obtained by averaging the
    last 5 checkpoints ... For the big models, we averaged the last 20" (§6.1).
    With fewer checkpoints than `last`, all of them are averaged (and the
    record says how many). Averaging the same checkpoints again returns the
    existing file. A corrupt checkpoint stops it, named, with how to leave it
    out; it is never skipped silently.

    Args:
        run_dir: str. The run directory.
        last: int or `None`. Checkpoints to average; `None` takes the recipe's
            `average_last`.
        verbose: int.

    Returns:
        The path of the averaged `.weights.h5`.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §6.1 (checkpoint averaging).
    """
    # Imported here: savedmodels sits above keras_transformer (BUILD_NOTES.md,
    # "Packages"), and only the command line reaches into it.
    from savedmodels import average_checkpoints

    run = RunDirectory(run_dir)
    recipe = run.read_recipe()
    last = recipe.average_last if last is None else last
    check_positive_int("last", last)
    checkpoints = run.checkpoints()[-last:]
    if not checkpoints:
        raise UserError(f"No checkpoints to average in {run.checkpoint_dir}.")
    for path in checkpoints:  # never skipped silently: a bad one stops here
        check_weights_file(path, hint=exclusion_hint(path).split(", or")[0])
    steps = [checkpoint_step(path) for path in checkpoints]
    name = f"avg-{steps[0]:08d}-{steps[-1]:08d}-n{len(steps)}"
    output = os.path.join(run.averaged_dir, f"{name}.weights.h5")
    if not os.path.exists(output):
        os.makedirs(run.averaged_dir, exist_ok=True)
        average_checkpoints(checkpoints, output)
        record = read_json(record_path(checkpoints[-1]))
        record.update(averaged_steps=steps, step=steps[-1])
        atomic_write_json(record, record_path(output))
    if verbose:
        print(f"Averaged {len(steps)} checkpoint(s), steps {steps}: {output}")
    return output
