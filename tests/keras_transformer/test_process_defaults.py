import ctypes
import os
import subprocess
import sys
import textwrap

import pytest

_GLIBC = hasattr(ctypes.CDLL(None), "mallinfo2")

# Frees an 8 MiB mmapped block (glibc would raise its threshold to 8 MiB),
# then prints how many bytes a 1 MiB allocation added to the mmapped total.
_PROBE = textwrap.dedent(
    """
    import ctypes, sys
    if sys.argv[1] in ("import", "tune"):
        import keras_transformer
    if sys.argv[1] == "tune":
        from keras_transformer.process_defaults import tune_memory
        tune_memory()
    libc = ctypes.CDLL(None)
    class Info(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in
                    "arena ordblks smblks hblks hblkhd usmblks fsmblks "
                    "uordblks fordblks keepcost".split()]
    libc.mallinfo2.restype = Info
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    libc.free(libc.malloc(8 << 20))
    before = libc.mallinfo2().hblkhd
    block = libc.malloc(1 << 20)
    print(libc.mallinfo2().hblkhd - before)
    libc.free(block)
    """
)


def _mmapped_bytes_of_1_mib(mode, **environment):
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_MMAP_THRESHOLD_"}
    env.update(environment, KERAS_BACKEND=os.environ.get("KERAS_BACKEND", "tensorflow"))
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, mode],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    return int(result.stdout.split()[-1])


@pytest.mark.skipif(not _GLIBC, reason="glibc's mallinfo2 is needed to observe it")
def test_import_leaves_mallopt_untouched():
    # glibc raises its threshold after the 8 MiB free: the 1 MiB block comes
    # from an arena (0 bytes more mmapped), with or without the package.
    assert _mmapped_bytes_of_1_mib("plain") == 0
    assert _mmapped_bytes_of_1_mib("import") == 0


@pytest.mark.skipif(not _GLIBC, reason="glibc's mallinfo2 is needed to observe it")
def test_tune_memory_keeps_the_mmap_threshold_at_128_kib():
    assert _mmapped_bytes_of_1_mib("tune") >= 1 << 20


@pytest.mark.skipif(not _GLIBC, reason="glibc's mallinfo2 is needed to observe it")
def test_a_user_threshold_is_kept():
    mmapped = _mmapped_bytes_of_1_mib("tune", MALLOC_MMAP_THRESHOLD_="4194304")
    assert mmapped == 0


def test_import_sets_only_the_documented_onednn_default():
    probe = (
        "import os, keras_transformer; print(os.environ.get('TF_ENABLE_ONEDNN_OPTS'))"
    )
    env = {k: v for k, v in os.environ.items() if k != "TF_ENABLE_ONEDNN_OPTS"}
    for preset, expected in ((None, "1"), ("0", "0")):
        if preset is not None:
            env["TF_ENABLE_ONEDNN_OPTS"] = preset
        result = subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=True,
        )
        assert result.stdout.split()[-1] == expected


def test_tensorflow_imported_first_is_warned_of_when_onednn_is_off():
    """The default cannot reach a TensorFlow imported before the package:
    `import keras_transformer` then warns, exactly when oneDNN is off (a CPU
    where TensorFlow turns it on by itself stays silent); imported first,
    the package turns it on; a value the user set is never warned of, nor a
    process whose Keras runs on JAX (TensorFlow serves its input pipeline
    only)."""
    probe = (
        "import sys, warnings\n"
        "warnings.simplefilter('always')\n"
        "first, second = sys.argv[1:]\n"
        "__import__(first)\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    __import__(second)\n"
        "from keras_transformer.process_defaults import onednn_enabled\n"
        "ours = [w for w in caught if 'TF_ENABLE_ONEDNN_OPTS' in str(w.message)]\n"
        "print(len(ours), onednn_enabled())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TF_ENABLE_ONEDNN_OPTS"}
    env["KERAS_BACKEND"] = "tensorflow"

    def run(first, second, **extra):
        result = subprocess.run(
            [sys.executable, "-c", probe, first, second],
            capture_output=True,
            text=True,
            env={**env, **extra},
            timeout=300,
            check=True,
        )
        return result.stdout.split()[-2:]

    warned, enabled = run("keras", "keras_transformer")
    assert enabled in ("True", "False")
    assert warned == ("1" if enabled == "False" else "0")
    assert run("keras_transformer", "tensorflow") == ["0", "True"]
    assert run("tensorflow", "keras_transformer", TF_ENABLE_ONEDNN_OPTS="0") == [
        "0",
        "False",
    ]
    # Where TensorFlow leaves oneDNN off, this import would warn on the
    # TensorFlow backend (the first case).
    assert run("tensorflow", "keras_transformer", KERAS_BACKEND="jax") == [
        "0",
        enabled,
    ]
