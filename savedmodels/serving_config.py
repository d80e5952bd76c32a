"""TF Serving's model config file (`--model_config_file=models.config`).

One `config` entry per model, in the text format of TF Serving's
`ModelServerConfig` proto (tensorflow/serving
`tensorflow_serving/config/model_server_config.proto`):

    model_config_list {
      config {
        name: "ende"
        base_path: "/models/ende"
        model_platform: "tensorflow"
        model_version_policy { specific { versions: 1 versions: 2 } }
        version_labels { key: "stable" value: 1 }
      }
    }

`base_path` is the directory `export_translator` writes versions into
(`<base_path>/<version>/`), as the *server* sees it (inside a container,
the mounted path). The server polls it (`--file_system_poll_wait_seconds`)
and loads new versions as they appear.

Version policies (TF Serving's default is the latest version):
`"latest"` or `("latest", n)` (the n largest versions), `"all"`, and
`("specific", [v, ...])`.
"""

import os
from collections.abc import Iterable, Mapping

_POLICY_NAMES = ("latest", "all", "specific")


def serving_config(models: Iterable[Mapping], path=None) -> str:
    """TF Serving's `models.config` text for one or more models.

    Args:
        models: iterable of mappings, one per model, with keys `name` (str;
            the `<name>` of `/v1/models/<name>` and of gRPC's
            `model_spec.name`), `base_path` (str; absolute path or URI such
            as `gs://...`, as the server sees it), and optionally
            `version_policy` (`None`, `"latest"`, `("latest", n)`, `"all"` or
            `("specific", [versions])`; `None` keeps the server's default,
            the latest version) and `version_labels` (`{label: version}`;
            labels must name versions the policy serves).
        path: optional str or path. Where to write the text (parent
            directories are created).

    Returns:
        The config text.

    Raises:
        ValueError: no models, a duplicate or empty name, a relative
            `base_path`, an unknown key or a bad version policy or label.

    Examples:
        >>> text = serving_config(
        ...     [{"name": "ende", "base_path": "/models/ende"},
        ...      {"name": "enfr", "base_path": "/models/enfr",
        ...       "version_policy": ("specific", [1, 2]),
        ...       "version_labels": {"stable": 1, "canary": 2}}],
        ...     path="serving/models.config")
    """
    models = list(models)
    if not models:
        raise ValueError(f"`models` must name at least one model. Received: {models}")
    entries, names = [], set()
    for model in models:
        entry = _entry(model)
        if entry["name"] in names:
            raise ValueError(
                f"Model names must be unique. Received: name={entry['name']!r} twice"
            )
        names.add(entry["name"])
        entries.append(entry)
    lines = ["model_config_list {"]
    for entry in entries:
        lines += _config_lines(entry)
    lines.append("}")
    text = "\n".join(lines) + "\n"
    if path is not None:
        path = os.fspath(path)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)
    return text


def _entry(model):
    known = {"name", "base_path", "version_policy", "version_labels"}
    unknown = set(model) - known
    if unknown:
        raise ValueError(
            f"Unknown model config keys {sorted(unknown)}; expected some of "
            f"{sorted(known)}. Received: model={dict(model)}"
        )
    name = model.get("name")
    if not isinstance(name, str) or not name or "/" in name:
        raise ValueError(
            f"`name` must be a non-empty string without '/'. Received: name={name!r}"
        )
    base_path = os.fspath(model.get("base_path", ""))
    if not (os.path.isabs(base_path) or "://" in base_path):
        raise ValueError(
            "`base_path` must be absolute (the path the server sees) or a URI "
            f"such as gs://bucket/models/ende. Received: base_path={base_path!r}"
        )
    policy = _policy(model.get("version_policy"))
    labels = dict(model.get("version_labels") or {})
    for label, version in labels.items():
        if not isinstance(label, str) or not label:
            raise ValueError(
                f"Version labels must be non-empty strings. Received: label={label!r}"
            )
        _check_version(version, "version_labels")
        if policy is not None and policy[0] == "specific" and version not in policy[1]:
            raise ValueError(
                "A version label must name a version the policy serves. Received: "
                f"version_labels={labels}, version_policy={policy}"
            )
    return {"name": name, "base_path": base_path, "policy": policy, "labels": labels}


def _policy(policy):
    """`None`, `("latest", n)`, `("all",)` or `("specific", (v, ...))`."""
    if policy is None:
        return None
    received = policy
    if isinstance(policy, str):
        policy = (policy,)
    kind = policy[0] if isinstance(policy, (tuple, list)) and policy else None
    if kind == "all" and len(policy) == 1:
        return ("all",)
    if kind == "latest" and len(policy) in (1, 2):
        count = policy[1] if len(policy) == 2 else 1
        _check_version(count, "version_policy")
        return ("latest", count)
    if kind == "specific" and len(policy) == 2 and not isinstance(policy[1], str):
        versions = tuple(policy[1])
        if versions:
            for version in versions:
                _check_version(version, "version_policy")
            return ("specific", tuple(sorted(set(versions))))
    raise ValueError(
        "`version_policy` must be None, 'latest', ('latest', n), 'all' or "
        f"('specific', [versions]). Received: version_policy={received!r}"
    )


def _check_version(value, name):
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(
            f"Versions in `{name}` must be positive integers. Received: {value!r}"
        )


def _config_lines(entry):
    lines = [
        "  config {",
        f"    name: {_quote(entry['name'])}",
        f"    base_path: {_quote(entry['base_path'])}",
        '    model_platform: "tensorflow"',
    ]
    policy = entry["policy"]
    if policy is not None:
        lines.append("    model_version_policy {")
        if policy[0] == "latest":
            lines.append(f"      latest {{ num_versions: {policy[1]} }}")
        elif policy[0] == "all":
            lines.append("      all {}")
        else:
            versions = " ".join(f"versions: {v}" for v in policy[1])
            lines.append(f"      specific {{ {versions} }}")
        lines.append("    }")
    for label, version in sorted(entry["labels"].items()):
        lines.append(f"    version_labels {{ key: {_quote(label)} value: {version} }}")
    lines.append("  }")
    return lines


def _quote(text):
    """A text-format string literal (C escapes, as protobuf's text format)."""
    escaped = (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )
    return f'"{escaped}"'
