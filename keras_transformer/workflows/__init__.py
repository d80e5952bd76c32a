"""A recipe's whole life from Python, as the command line runs it, on one
run directory: `prepare`, `train`, `average`, `evaluate` and `export` (each
a library call; the `keras-transformer` subcommand of the same name is a
thin shell over it), and `run_demo`, all of them in order.

Example:

```python
from keras_transformer import workflows
from keras_transformer.recipes import get_recipe

recipe = get_recipe("demo", train_steps=200)
workflows.prepare(recipe, "runs/demo")
workflows.train(recipe, "runs/demo")
workflows.average("runs/demo")
scores = workflows.evaluate("runs/demo")  # BLEU, chrF and signatures
workflows.export("runs/demo")  # runs/demo/export/1
```

Application layer: the top of it, over `runs`, `translation` and
`parsing`."""

from keras_transformer.lazy_exports import lazy_exports

_LAZY = {
    "prepare": "keras_transformer.runs.prepare",
    "train": "keras_transformer.runs.train",
    "average": "keras_transformer.runs.average",
    "evaluate": "keras_transformer.workflows.evaluate_run",
    "export": "keras_transformer.workflows.export_run",
    "run_demo": "keras_transformer.workflows.demo",
}

__all__ = ["average", "evaluate", "export", "prepare", "run_demo", "train"]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
