"""Training: the paper's schedule, loss and metrics (§5.3, §5.4), compiling,
distribution strategies and checkpoints. TensorFlow is imported only where a
helper needs `tf.distribute`."""

from keras_transformer.training.compile_transformer import compile_transformer
from keras_transformer.training.distribution import (
    STRATEGIES,
    has_accelerator,
    is_chief,
    make_strategy,
    worker_count,
)
from keras_transformer.training.fit_resumable import fit_resumable, planned_updates
from keras_transformer.training.label_smoothed_cross_entropy import (
    LabelSmoothedCrossEntropy,
)
from keras_transformer.training.learning_curve_log import (
    LearningCurveLog,
    read_learning_curve,
)
from keras_transformer.training.loss_scale_log import LossScaleLog
from keras_transformer.training.masked_token_accuracy import MaskedTokenAccuracy
from keras_transformer.training.perplexity import Perplexity
from keras_transformer.training.rotating_checkpoints import (
    RotatingCheckpoints,
    checkpoint_step,
    list_checkpoints,
    record_path,
)
from keras_transformer.training.throughput import TargetTokens, ThroughputLogger
from keras_transformer.training.time_limit import TimeLimit
from keras_transformer.training.training_backup import TrainingBackup
from keras_transformer.training.training_progress import TrainingProgress
from keras_transformer.training.transformer_schedule import TransformerSchedule
from keras_transformer.training.xla_compilation import (
    XlaCompileLog,
    align_trace_names,
    resolve_jit_compile,
    use_compilation_cache,
)

__all__ = [
    "STRATEGIES",
    "LabelSmoothedCrossEntropy",
    "LearningCurveLog",
    "LossScaleLog",
    "MaskedTokenAccuracy",
    "Perplexity",
    "RotatingCheckpoints",
    "TargetTokens",
    "ThroughputLogger",
    "TimeLimit",
    "TrainingBackup",
    "TrainingProgress",
    "TransformerSchedule",
    "XlaCompileLog",
    "align_trace_names",
    "checkpoint_step",
    "compile_transformer",
    "fit_resumable",
    "has_accelerator",
    "is_chief",
    "list_checkpoints",
    "make_strategy",
    "planned_updates",
    "read_learning_curve",
    "record_path",
    "resolve_jit_compile",
    "use_compilation_cache",
    "worker_count",
]
