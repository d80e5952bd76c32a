"""Export-time check that a SavedModel uses only ops TF Serving registers.

TF Serving's model server links TensorFlow's core ops, XLA's CPU JIT (so the
tf2xla ops such as `XlaDynamicUpdateSlice`) and the ops of one pinned
tensorflow-text release (`@org_tensorflow_text//tensorflow_text:ops_lib` in
tensorflow/serving `tensorflow_serving/model_servers/BUILD`; the release is
pinned in `tensorflow_serving/workspace.bzl`: tensorflow-text 2.20.0 at the
revision read). A SavedModel with any other op loads in Python but fails in
the server with `Op type not registered`. `check_serving_ops` lists every op
of every function in `saved_model.pb` and refuses the ones that are neither:

- **core**: registered by `import tensorflow` alone, read from TensorFlow's op
  registry in a fresh Python process (ops registered by tensorflow-text or
  other op libraries only appear after their import); nor
- **tensorflow-text, known for the target release**: in `TF_TEXT_OPS`, with a
  first release not after `tf_text_version`.

Core ops are those of the *installed* TensorFlow: serve with the TF Serving
release of the same version. Default-valued attributes are stripped at save
time (`meta_info_def.stripped_default_attrs`), so attributes that newer
tensorflow-text releases added to an op do not matter while left at their
defaults.
"""

import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys

from keras_transformer.package_cache import package_cache_folder

# The tensorflow-text release linked into stock TF Serving (pinned in
# tensorflow/serving `tensorflow_serving/workspace.bzl`, see above): the target
# of the check unless the caller names another.
SERVING_TF_TEXT_VERSION = "2.20"

# tensorflow-text ops known per release: op name -> first release known to
# register it. Only the SentencePiece family, the tensorflow-text ops of the
# exported translator; extend it (with its source) before exporting a graph
# with other tensorflow-text ops. Sources: op names from tensorflow/text
# `tensorflow_text/core/ops/sentencepiece_ops.cc`; releases from the names in
# `tensorflow_text/python/ops/_sentencepiece_tokenizer.so` of the
# tensorflow-text 2.0.1 and 2.10.0 wheels (SentencepieceTokenizer first shipped
# in 2.0.0, per its release notes; `SentencepieceStringToIdOp` is absent from
# 2.0.1 and present in 2.10.0, so 2.10 is a safe lower bound, not its first
# release). TF Serving exercises this family in its tf_text regression model
# (tensorflow/text `oss_scripts/model_server/save_models.py`).
# tests/savedmodels/test_op_compatibility.py checks that the installed
# tensorflow-text registers every op listed.
TF_TEXT_OPS = {
    "SentencepieceOp": "2.0",
    "SentencepieceTokenizeOp": "2.0",
    "SentencepieceTokenizeWithOffsetsOp": "2.0",
    "SentencepieceDetokenizeOp": "2.0",
    "SentencepieceVocabSizeOp": "2.0",
    "SentencepieceIdToStringOp": "2.0",
    "SentencepieceStringToIdOp": "2.10",
}

# Places shown per refused op in the error message.
_MAX_PLACES = 3

# Run by `_registries` in a fresh interpreter: TensorFlow's op registry before
# and after importing tensorflow_text.
_REGISTRY_SCRIPT = """
import json
import tensorflow as tf
from tensorflow.core.framework import op_def_pb2
from tensorflow.python.client import pywrap_tf_session as c_api


def registered():
    buffer = c_api.TF_GetAllOpList()
    try:
        ops = op_def_pb2.OpList.FromString(c_api.TF_GetBuffer(buffer))
    finally:
        c_api.TF_DeleteBuffer(buffer)
    return sorted(op.name for op in ops.op)


out = {"tensorflow": tf.__version__, "core": registered()}
try:
    import tensorflow_text
except ImportError:
    out.update(tensorflow_text=None, tf_text=[])
else:
    out["tensorflow_text"] = tensorflow_text.__version__
    out["tf_text"] = sorted(set(registered()) - set(out["core"]))
print(json.dumps(out))
"""


def check_serving_ops(
    saved_model_dir, tf_text_version=SERVING_TF_TEXT_VERSION
) -> list[str]:
    """Checks that TF Serving can run every op of a SavedModel.

    Reads `saved_model.pb` (every meta graph: its nodes and every function of
    its library), and accepts an op when TensorFlow itself registers it or
    when it is a tensorflow-text op (`TF_TEXT_OPS`) that the server's
    tensorflow-text release `tf_text_version` has. See the module docstring
    for where both lists come from. TensorFlow's op registry is read once
    per installation in a Python subprocess (a few seconds), then from a
    file in the package's cache folder (`keras_transformer.package_cache`:
    `KERAS_TRANSFORMER_CACHE`, default `~/.cache/keras-transformer`; an empty
    value turns the file off).

    Args:
        saved_model_dir: str or path. A SavedModel directory (one version,
            e.g. `exports/ende/1`).
        tf_text_version: str. The tensorflow-text release linked into the
            target TF Serving build, `"major.minor"` (a patch part is
            ignored). Defaults to `SERVING_TF_TEXT_VERSION`.

    Returns:
        The sorted names of the ops the SavedModel uses.

    Raises:
        ValueError: a bad `tf_text_version`, no `saved_model.pb`, or ops the
            server would not register; the message names each such op, why,
            and where it is used (function and node, and the signatures that
            reach it).

    Examples:
        >>> ops = check_serving_ops("exports/ende/1", tf_text_version="2.20")
        >>> "SentencepieceOp" in ops
        True
    """
    target = parse_tf_text_version(tf_text_version)
    saved_model_dir = os.fspath(saved_model_dir)
    uses = _ops_in_saved_model(saved_model_dir)
    registry = _registries()
    core = set(registry["core"])
    refused = {}
    for op in sorted(uses):
        if op in core:
            continue
        since = TF_TEXT_OPS.get(op)
        if since is not None and parse_tf_text_version(since) <= target:
            continue
        refused[op] = _reason(op, since, tf_text_version, registry)
    if refused:
        lines = [
            f"  - {op}: {reason}; used in {_places(uses[op])}"
            for op, reason in refused.items()
        ]
        raise ValueError(
            "The SavedModel uses ops that TF Serving with tensorflow-text "
            f"{tf_text_version} does not register:\n"
            + "\n".join(lines)
            + "\nExport without them, or target a TF Serving build that links "
            "them (see savedmodels/op_compatibility.py). Received: "
            f"saved_model_dir={saved_model_dir}, "
            f"tf_text_version={tf_text_version}"
        )
    return sorted(uses)


def parse_tf_text_version(version):
    match = re.fullmatch(r"(\d+)\.(\d+)(\.\d+)?", str(version).strip())
    if match is None:
        raise ValueError(
            "`tf_text_version` must be a release such as '2.20' or '2.20.0'. "
            f"Received: tf_text_version={version!r}"
        )
    return int(match.group(1)), int(match.group(2))


def _reason(op, since, tf_text_version, registry):
    installed = registry["tensorflow_text"]
    if since is not None:
        return (
            f"tensorflow-text op first known in tensorflow-text {since}, after "
            f"the target {tf_text_version}"
        )
    if op in registry["tf_text"]:
        return (
            f"tensorflow-text op (registered by the installed tensorflow-text "
            f"{installed}) not in TF_TEXT_OPS, the ops known per release"
        )
    return (
        f"registered neither by TensorFlow {registry['tensorflow']} nor by "
        f"tensorflow-text {installed} (a custom op?)"
    )


def _places(places):
    # Places that signatures reach first: they say what the op is used for.
    places = sorted(places, key=lambda place: not place[2])
    shown = [
        f"{where} (node '{node}'"
        + (f"; signatures: {', '.join(sorted(signatures))})" if signatures else ")")
        for where, node, signatures in places[:_MAX_PLACES]
    ]
    more = len(places) - _MAX_PLACES
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


_REGISTRY_KEYS = ("tensorflow", "core", "tensorflow_text", "tf_text")


@functools.lru_cache(maxsize=1)
def _registries():
    """`{"tensorflow", "core", "tensorflow_text", "tf_text"}`: TF's version,
    the ops `import tensorflow` registers, the installed tensorflow-text's
    version and the ops its import adds.

    Read in a fresh interpreter (slow: it imports TensorFlow and
    tensorflow-text), then
    kept on disk for the same installation (`_registry_cache_path`), so that
    later processes (each `keras-transformer export`) read a file instead."""
    path = _registry_cache_path()
    if path is not None:
        try:
            with open(path, encoding="utf-8") as file:
                cached = json.load(file)
            if isinstance(cached, dict) and set(cached) == set(_REGISTRY_KEYS):
                return cached
        except (OSError, ValueError):
            pass  # not written yet, or unreadable: read the registry again
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    result = subprocess.run(
        [sys.executable, "-c", _REGISTRY_SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if result.returncode != 0:
        raise RuntimeError(
            "Could not read TensorFlow's op registry in a subprocess:\n"
            + result.stderr[-2000:]
        )
    registry = json.loads(result.stdout.strip().splitlines()[-1])
    if path is not None:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            # Whole or not at all: a concurrent reader never sees half a file.
            partial = f"{path}.{os.getpid()}.partial"
            with open(partial, "w", encoding="utf-8") as file:
                json.dump(registry, file)
            os.replace(partial, path)
        except OSError:
            pass  # a read-only cache folder: the next process reads again
    return registry


def _registry_cache_path():
    """Where `_registries` keeps its result for this installation, or `None`
    (caching off).

    The folder is the package's (`keras_transformer.package_cache`:
    `$KERAS_TRANSFORMER_CACHE`, else `$XDG_CACHE_HOME/keras-transformer`, else
    `~/.cache/keras-transformer`; `KERAS_TRANSFORMER_CACHE=""` turns it off).
    The file name hashes the
    interpreter and, for TensorFlow and tensorflow-text, the version and the
    path, size and modification time of the package's `__init__.py`, so that
    installing another build of either reads the registry afresh."""
    folder = package_cache_folder()
    if folder is None:
        return None
    key = [os.path.realpath(sys.executable), sys.version]
    for module, distribution in (
        ("tensorflow", "tensorflow"),
        ("tensorflow_text", "tensorflow-text"),
    ):
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            key.append(None)
            continue
        stat = os.stat(spec.origin)
        try:
            version = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            version = None
        key.append([version, spec.origin, stat.st_size, stat.st_mtime_ns])
    digest = hashlib.sha256(json.dumps(key).encode("utf-8")).hexdigest()[:16]
    return os.path.join(folder, f"op-registry-{digest}.json")


def _ops_in_saved_model(saved_model_dir):
    """`{op: [(where, node name, signatures reaching it)]}` over every meta
    graph's nodes and library functions."""
    from tensorflow.core.protobuf import saved_model_pb2

    path = os.path.join(saved_model_dir, "saved_model.pb")
    if not os.path.isfile(path):
        raise ValueError(
            "No saved_model.pb in the directory (text `.pbtxt` SavedModels are "
            f"not supported). Received: saved_model_dir={saved_model_dir}"
        )
    saved_model = saved_model_pb2.SavedModel()
    with open(path, "rb") as file:
        saved_model.ParseFromString(file.read())
    uses = {}
    for meta_graph in saved_model.meta_graphs:
        graph = meta_graph.graph_def
        functions = {f.signature.name: f for f in graph.library.function}
        reached = _signatures_per_function(meta_graph, functions)
        for node in graph.node:
            if node.op not in functions:
                signatures = _signatures_of_node(meta_graph, node.name)
                uses.setdefault(node.op, []).append(
                    ("the graph", node.name, signatures)
                )
        for name, function in functions.items():
            for node in function.node_def:
                if node.op not in functions:
                    place = (f"function '{name}'", node.name, reached.get(name, set()))
                    uses.setdefault(node.op, []).append(place)
    return uses


def _called_functions(node, functions):
    """Library functions a node calls: by op name, or through function-valued
    attributes (`f` of calls, `then_branch`, `body`, `branches`, ...)."""
    called = {node.op} & functions.keys()
    for value in node.attr.values():
        if value.HasField("func"):
            called.add(value.func.name)
        called.update(f.name for f in value.list.func)
    return called & functions.keys()


def _signatures_of_node(meta_graph, node_name):
    return {
        key
        for key, signature in meta_graph.signature_def.items()
        for tensor in signature.outputs.values()
        if tensor.name.split(":")[0] == node_name
    }


def _signatures_per_function(meta_graph, functions):
    """`{function name: names of the signatures that (transitively) call it}`."""
    reached = {}
    graph_nodes = {node.name: node for node in meta_graph.graph_def.node}
    for key, signature in meta_graph.signature_def.items():
        stack = []
        for tensor in signature.outputs.values():
            node = graph_nodes.get(tensor.name.split(":")[0])
            if node is not None:
                stack.extend(_called_functions(node, functions))
        seen = set()
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            reached.setdefault(name, set()).add(key)
            for node in functions[name].node_def:
                stack.extend(_called_functions(node, functions))
    return reached
