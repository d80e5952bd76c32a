"""`tf.distribute` strategies by name, for `model.fit` on one or many devices."""

STRATEGIES = ("default", "mirrored", "multi_worker", "tpu")


def make_strategy(name="default", devices=None, tpu=None):
    """Returns a `tf.distribute.Strategy` chosen by name.

    - `"default"`: the default strategy (one device).
    - `"mirrored"`: `MirroredStrategy`, synchronous data parallelism over all
      local GPUs, or over `devices` (e.g. `["/cpu:0", "/cpu:1"]`).
    - `"multi_worker"`: `MultiWorkerMirroredStrategy`; the cluster comes from the
      `TF_CONFIG` environment variable.
    - `"tpu"`: `TPUStrategy` on the TPU named by `tpu` (`""` or `None` for the
      local one, as on a Cloud TPU VM). TPUs need static shapes: use the
      pipeline's static-shape batching.

    Build and compile the model inside `strategy.scope()`; `model.fit` then
    distributes the dataset (each global batch is split across replicas).

    Args:
        name: str. One of `STRATEGIES`.
        devices: optional list of device names for `"mirrored"`.
        tpu: optional TPU name or address for `"tpu"`.

    Returns:
        A `tf.distribute.Strategy`.
    """
    import tensorflow as tf

    if name == "default":
        return tf.distribute.get_strategy()
    if name == "mirrored":
        return tf.distribute.MirroredStrategy(devices=devices)
    if name == "multi_worker":
        return tf.distribute.MultiWorkerMirroredStrategy()
    if name == "tpu":
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu or "")
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        return tf.distribute.TPUStrategy(resolver)
    raise ValueError(
        f"Unknown strategy. Expected one of {STRATEGIES}. Received: name={name!r}"
    )
