"""The optimizer's update count as a Python int, under any strategy."""

import numpy as np
from keras import ops


def optimizer_step(model):
    """`model.optimizer.iterations` as an int (also for distributed variables,
    which `int()` does not accept)."""
    return int(np.asarray(ops.convert_to_numpy(model.optimizer.iterations.value)))
