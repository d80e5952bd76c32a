"""`tf.distribute` strategies by name, for `model.fit` on one or many devices."""

import keras

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
        return _multi_worker_strategy_class()()
    if name == "tpu":
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu or "")
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        return tf.distribute.TPUStrategy(resolver)
    raise ValueError(
        f"Unknown strategy. Expected one of {STRATEGIES}. Received: name={name!r}"
    )


def has_accelerator():
    """Whether this machine has a GPU or TPU (a device other than CPUs)."""
    import tensorflow as tf  # noqa: PLC0415 (training helpers may use TF)

    return any(d.device_type != "CPU" for d in tf.config.list_physical_devices())


def is_chief(strategy=None):
    """Whether this process writes the files of a run that all workers share.

    Under `MultiWorkerMirroredStrategy` every worker runs the same `model.fit`,
    callbacks included, and the run directory (backup, checkpoints, logs) is on
    a file system they all share, as resuming requires: every worker reads the
    backup, and only the chief writes (two workers writing one file fail or
    corrupt it). The chief is `strategy.extended.should_checkpoint`: the
    `"chief"` task, or worker 0 of a cluster without one. One-process
    strategies (default, mirrored, TPU) are their own chief. On JAX it is
    process 0.

    Args:
        strategy: a `tf.distribute.Strategy`, or `None` for the current one
            (a Keras model's is `model.distribute_strategy`).

    Returns:
        bool.
    """
    if keras.backend.backend() == "jax":
        import jax

        return jax.process_index() == 0
    if keras.backend.backend() != "tensorflow":
        return True
    if strategy is None:
        import tensorflow as tf

        strategy = tf.distribute.get_strategy()
    return bool(strategy.extended.should_checkpoint)


def worker_count(strategy=None):
    """The number of worker processes (chief included) that run the training.

    The tasks of a `MultiWorkerMirroredStrategy`'s cluster; 1 for one-process
    strategies (default, mirrored, and TPU, whose one client drives every core)
    and on other backends.
    """
    if keras.backend.backend() != "tensorflow":
        return 1
    import tensorflow as tf

    if strategy is None:
        strategy = tf.distribute.get_strategy()
    if not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return 1
    spec = strategy.cluster_resolver.cluster_spec()
    return max(
        1, sum(spec.num_tasks(job) for job in ("chief", "worker") if job in spec.jobs)
    )


def _multi_worker_strategy_class():
    """`MultiWorkerMirroredStrategy` whose `reduce` takes what Keras gives it.

    Keras 3's TensorFlow trainer calls `strategy.reduce` in two ways that
    `MultiWorkerMirroredStrategy` rejects, so `model.fit` fails under it
    (keras-team/keras issues #20585 and #20329, open as of Keras 3.15):
    on the nested first input batch (it takes a single value only), and with
    `axis=0` on scalar metric results (there is no axis 0; with one device per
    worker they are not even `PerReplica` values). This subclass reduces leaf
    by leaf, reduces scalars across replicas only, and passes through values
    that are not distributed, which is what the callers mean.
    """
    import tensorflow as tf

    class NestedReduceMultiWorkerMirroredStrategy(
        tf.distribute.MultiWorkerMirroredStrategy
    ):
        def reduce(self, reduce_op, value, axis):
            parent = super()

            def reduce_leaf(leaf):
                if not isinstance(leaf, tf.distribute.DistributedValues):
                    # A metric result Keras passes as a plain tensor: metric
                    # variables are already aggregated over all replicas.
                    return leaf
                rank = self.experimental_local_results(leaf)[0].shape.rank
                return parent.reduce(reduce_op, leaf, None if rank == 0 else axis)

            return tf.nest.map_structure(reduce_leaf, value)

    return NestedReduceMultiWorkerMirroredStrategy
