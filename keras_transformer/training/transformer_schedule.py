"""The learning-rate schedule of paper §5.3 (warmup, then inverse square root)."""

import keras
from keras import ops

from keras_transformer.validation import check_positive_int


@keras.saving.register_keras_serializable(package="keras_transformer")
class TransformerSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """lrate = scale * d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5).

    Paper §5.3, Eq. (3): the rate grows linearly for the first `warmup_steps`
    training steps and then decreases proportionally to the inverse square root
    of the step number; warmup_steps = 4000 in the paper. `scale` multiplies the
    whole curve (tensor2tensor's `learning_rate` hyperparameter, 1.0 = the
    paper); small models trained briefly often want a larger scale or warmup.

    Keras counts optimizer iterations from 0; the paper's step number starts at
    1, so the schedule evaluates the formula at `iterations + 1` (otherwise the
    first update would have a rate of exactly 0).

    Args:
        d_model: int. The model size.
        warmup_steps: int. Defaults to `4000`.
        scale: float. Multiplies the rate. Defaults to `1.0`.

    References:
        - [Vaswani et al., 2017. Attention Is All You Need](
          https://arxiv.org/abs/1706.03762), §5.3 (Eq. 3).

    Examples:
        >>> schedule = TransformerSchedule(d_model=512)
        >>> round(float(schedule(3999)), 6)  # the peak, step 4000
        0.000699
    """

    def __init__(self, d_model, warmup_steps=4000, scale=1.0):
        check_positive_int("d_model", d_model)
        check_positive_int("warmup_steps", warmup_steps)
        if not scale > 0:
            raise ValueError(f"`scale` must be positive. Received: scale={scale}")
        self.d_model = d_model
        self.warmup_steps = warmup_steps
        self.scale = scale

    def __call__(self, step):
        step = ops.cast(step, "float32") + 1.0
        warmup = float(self.warmup_steps)
        rate = ops.minimum(ops.power(step, -0.5), step * warmup**-1.5)
        return self.scale * float(self.d_model) ** -0.5 * rate

    def get_config(self):
        return {
            "d_model": self.d_model,
            "warmup_steps": self.warmup_steps,
            "scale": self.scale,
        }
