"""`serving_config`: TF Serving's models.config, checked by parsing it into TF
Serving's own `ModelServerConfig` proto (tensorflow-serving-api)."""

import pytest
from google.protobuf import text_format
from tensorflow_serving.config import model_server_config_pb2

from savedmodels.serving_config import serving_config


def _parse(text):
    return text_format.Parse(text, model_server_config_pb2.ModelServerConfig())


def test_one_model(tmp_path):
    path = tmp_path / "serving" / "models.config"
    text = serving_config([{"name": "ende", "base_path": "/models/ende"}], path=path)
    assert path.read_text() == text
    (config,) = _parse(text).model_config_list.config
    assert config.name == "ende"
    assert config.base_path == "/models/ende"
    assert config.model_platform == "tensorflow"
    assert not config.HasField("model_version_policy")  # the server's default


def test_several_models_with_version_policies_and_labels():
    text = serving_config(
        [
            {"name": "ende", "base_path": "/models/ende", "version_policy": "all"},
            {
                "name": "enfr",
                "base_path": 'gs://bucket/models/en fr "quoted"',
                "version_policy": ("specific", [2, 1]),
                "version_labels": {"stable": 1, "canary": 2},
            },
            {
                "name": "deen",
                "base_path": "/models/deen",
                "version_policy": ("latest", 2),
            },
            {"name": "fren", "base_path": "/models/fren", "version_policy": "latest"},
        ]
    )
    configs = _parse(text).model_config_list.config
    assert [c.name for c in configs] == ["ende", "enfr", "deen", "fren"]
    assert configs[0].model_version_policy.HasField("all")
    assert configs[1].base_path == 'gs://bucket/models/en fr "quoted"'
    assert list(configs[1].model_version_policy.specific.versions) == [1, 2]
    assert dict(configs[1].version_labels) == {"stable": 1, "canary": 2}
    assert configs[2].model_version_policy.latest.num_versions == 2
    assert configs[3].model_version_policy.latest.num_versions == 1


@pytest.mark.parametrize(
    "models, match",
    [
        ([], "at least one model"),
        ([{"name": "", "base_path": "/m"}], "name=''"),
        ([{"name": "a/b", "base_path": "/m"}], "name='a/b'"),
        ([{"name": "ende", "base_path": "exports/ende"}], "base_path='exports/ende'"),
        (
            [{"name": "ende", "base_path": "/a"}, {"name": "ende", "base_path": "/b"}],
            "name='ende' twice",
        ),
        ([{"name": "ende", "base_path": "/m", "policy": "all"}], r"\['policy'\]"),
        (
            [{"name": "ende", "base_path": "/m", "version_policy": "newest"}],
            "version_policy='newest'",
        ),
        (
            [{"name": "ende", "base_path": "/m", "version_policy": ("specific", [])}],
            r"version_policy=\('specific', \[\]\)",
        ),
        (
            [{"name": "ende", "base_path": "/m", "version_policy": ("latest", 0)}],
            "Received: 0",
        ),
        (
            [
                {
                    "name": "ende",
                    "base_path": "/m",
                    "version_policy": ("specific", [1]),
                    "version_labels": {"canary": 2},
                }
            ],
            "version_labels=",
        ),
    ],
)
def test_bad_configs(models, match):
    with pytest.raises(ValueError, match=match):
        serving_config(models)


def test_the_text_shown_in_the_serving_docs():
    # The example of savedmodels/README.md (models.config), verbatim.
    text = serving_config(
        [
            {"name": "ende", "base_path": "/models/ende"},
            {
                "name": "enfr",
                "base_path": "/models/enfr",
                "version_policy": ("specific", [1, 2]),
                "version_labels": {"stable": 1, "canary": 2},
            },
        ]
    )
    assert text == (
        "model_config_list {\n"
        "  config {\n"
        '    name: "ende"\n'
        '    base_path: "/models/ende"\n'
        '    model_platform: "tensorflow"\n'
        "  }\n"
        "  config {\n"
        '    name: "enfr"\n'
        '    base_path: "/models/enfr"\n'
        '    model_platform: "tensorflow"\n'
        "    model_version_policy {\n"
        "      specific { versions: 1 versions: 2 }\n"
        "    }\n"
        '    version_labels { key: "canary" value: 2 }\n'
        '    version_labels { key: "stable" value: 1 }\n'
        "  }\n"
        "}\n"
    )
