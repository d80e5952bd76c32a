"""`compute_dtype="auto"`: decoding's dtype resolves as training's
`precision="auto"` does."""

import pytest

from keras_transformer.precisions import resolve_precision
from keras_transformer.runs.compute_dtypes import resolve_compute_dtype
from tests.keras_transformer.test_precisions import (
    AVX2,
    GRAVITON3,
    SAPPHIRE_RAPIDS,
    ZEN4,
)


@pytest.mark.parametrize("accelerator", [False, True], ids=["cpus", "accelerator"])
@pytest.mark.parametrize(
    "cpuinfo", [AVX2, ZEN4, SAPPHIRE_RAPIDS, GRAVITON3, None], ids=str
)
def test_auto_resolves_as_the_training_precision_auto(cpuinfo, accelerator, tmp_path):
    path = tmp_path / "cpuinfo"  # None: no such file (not Linux)
    if cpuinfo is not None:
        path.write_text(cpuinfo)
    dtype = resolve_compute_dtype("auto", accelerator, str(path))
    precision = resolve_precision("auto", accelerator, str(path))
    assert (dtype, precision) in {
        ("bfloat16", "mixed_bfloat16"),
        ("float32", "float32"),
    }
    bfloat16_cpu = cpuinfo in (ZEN4, SAPPHIRE_RAPIDS, GRAVITON3)
    assert (dtype == "bfloat16") == (bfloat16_cpu and not accelerator)


def test_a_named_dtype_is_kept_and_another_refused(tmp_path):
    path = tmp_path / "cpuinfo"
    path.write_text(ZEN4)
    assert resolve_compute_dtype("float32", False, str(path)) == "float32"
    assert resolve_compute_dtype("bfloat16", True, str(path)) == "bfloat16"
    with pytest.raises(ValueError, match="Received: compute_dtype='float16'"):
        resolve_compute_dtype("float16", False, str(path))
