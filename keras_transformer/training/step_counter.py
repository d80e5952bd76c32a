"""The optimizer's update count as a Python int, under any strategy."""

import numpy as np
from keras import ops


def optimizer_step(model):
    """`model.optimizer.iterations` as an int: updates, also under gradient
    accumulation (where Keras returns a tensor: batches // accumulation steps)
    and for distributed variables (which `int()` does not accept)."""
    iterations = model.optimizer.iterations
    iterations = getattr(iterations, "value", iterations)
    return int(np.asarray(ops.convert_to_numpy(iterations)))
