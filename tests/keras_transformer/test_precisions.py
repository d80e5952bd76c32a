"""`precision="auto"`: the CPU flags it reads and what it resolves to."""

import pytest

from keras_transformer.precisions import cpu_has_bfloat16_matmuls, resolve_precision
from keras_transformer.recipes import get_recipe

AVX2 = "flags\t\t: fpu vme sse sse2 avx avx2 fma avx512f\n"
ZEN4 = "flags\t\t: fpu avx2 avx512f avx512_vnni avx512_bf16\n"
SAPPHIRE_RAPIDS = "flags\t\t: fpu avx2 avx512f amx_bf16 amx_tile amx_int8\n"
GRAVITON3 = "Features\t: fp asimd sve bf16 i8mm\n"


@pytest.mark.parametrize(
    "cpuinfo, expected",
    [(AVX2, False), (ZEN4, True), (SAPPHIRE_RAPIDS, True), (GRAVITON3, True)],
)
def test_bfloat16_matmul_flags_are_read_from_cpuinfo(cpuinfo, expected, tmp_path):
    path = tmp_path / "cpuinfo"
    # Only the first processor's flags are read: the others repeat them.
    path.write_text(f"processor\t: 0\n{cpuinfo}\nprocessor\t: 1\n{ZEN4}")
    assert cpu_has_bfloat16_matmuls(str(path)) is expected


def test_an_unreadable_cpuinfo_has_no_bfloat16(tmp_path):
    assert cpu_has_bfloat16_matmuls(str(tmp_path / "absent")) is False


@pytest.mark.parametrize(
    "precision, accelerator, cpuinfo, expected",
    [
        ("auto", False, ZEN4, "mixed_bfloat16"),
        ("auto", False, AVX2, "float32"),
        ("auto", True, SAPPHIRE_RAPIDS, "float32"),  # GPUs name their own
        ("mixed_float16", False, AVX2, "mixed_float16"),
        ("float32", False, ZEN4, "float32"),
    ],
)
def test_auto_resolves_to_mixed_bfloat16_only_on_a_bfloat16_cpu(
    precision, accelerator, cpuinfo, expected, tmp_path
):
    path = tmp_path / "cpuinfo"
    path.write_text(cpuinfo)
    assert resolve_precision(precision, accelerator, str(path)) == expected


def test_the_cpu_demos_train_in_auto_and_the_paper_in_float32():
    assert get_recipe("demo").precision == "auto"
    assert get_recipe("gum_parsing").precision == "auto"
    assert get_recipe("wmt14_en_de_base").precision == "float32"
    assert get_recipe("wsj_parsing").precision == "float32"
    with pytest.raises(ValueError, match="precision='float16'"):
        get_recipe("demo", precision="float16")
