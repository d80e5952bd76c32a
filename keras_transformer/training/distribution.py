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
        return _multi_worker_strategy_class()()
    if name == "tpu":
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu or "")
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        return tf.distribute.TPUStrategy(resolver)
    raise ValueError(
        f"Unknown strategy. Expected one of {STRATEGIES}. Received: name={name!r}"
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
