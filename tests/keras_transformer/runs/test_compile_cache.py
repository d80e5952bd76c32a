"""The decoding compile cache: where it lives and which entries it keeps
(`test_parsing.py` runs two `parse` processes over one)."""

import io
import os

from keras_transformer.package_cache import CACHE_ENV
from keras_transformer.runs.compile_cache import (
    cache_root,
    is_whole_entry,
    machine_key,
    remove_damaged_entries,
    use_decoding_cache,
)
from keras_transformer.training.xla_compilation import CACHE_FILE_PREFIX
from tests.keras_transformer.test_precisions import SAPPHIRE_RAPIDS, ZEN4


def _varint(value):
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number, payload):
    """A length-delimited protocol-buffer field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


# An `XlaSerializedCacheEntry` as TensorFlow frames it: key (1), HLO (2),
# executable (3); the key holds two fixed64-free varints and a string.
KEY = _varint(1 << 3) + _varint(2**63 + 5) + _field(3, b"XLA_CPU_JIT")
ENTRY = _field(1, KEY) + _field(2, b"h" * 300) + _field(3, b"x" * 5000)


def test_a_whole_entry_is_kept_and_a_cut_or_foreign_one_is_not():
    assert is_whole_entry(ENTRY)
    for end in (len(ENTRY) - 1, len(ENTRY) // 2, 3, 1):
        assert not is_whole_entry(ENTRY[:end]), end
    assert not is_whole_entry(b"")
    assert not is_whole_entry(ENTRY + b"\x00")  # field 0, wire type 0, cut
    assert not is_whole_entry(_field(1, KEY))  # no executable
    assert not is_whole_entry(b"not a protocol buffer at all\n")
    assert not is_whole_entry(b"\xff" * 12)  # a varint over 10 bytes


def test_damaged_entries_are_removed_and_named(tmp_path):
    whole, cut, empty = (f"{CACHE_FILE_PREFIX}{i}__XLA_CPU_JIT.pb" for i in (1, 2, 3))
    (tmp_path / whole).write_bytes(ENTRY)
    (tmp_path / cut).write_bytes(ENTRY[:1000])
    (tmp_path / empty).write_bytes(b"")
    # Another process's entry being written: TensorFlow's temporary name.
    writing = f"{whole[:-3]}4.pb1a2b3c4d5e.tmp"
    (tmp_path / writing).write_bytes(ENTRY[:1000])
    (tmp_path / "notes.txt").write_text("not an entry")
    assert remove_damaged_entries(str(tmp_path)) == [cut, empty]
    assert sorted(os.listdir(tmp_path)) == ["notes.txt", whole, writing]
    assert remove_damaged_entries(str(tmp_path / "missing")) == []


def test_the_cache_is_in_the_package_cache_folder(tmp_path):
    assert cache_root({CACHE_ENV: str(tmp_path)}) == str(tmp_path / "xla")
    assert cache_root({CACHE_ENV: ""}) is None  # every cache off
    assert cache_root({"XDG_CACHE_HOME": "/c"}) == "/c/keras-transformer/xla"
    home = os.path.expanduser("~")
    assert cache_root({}) == os.path.join(home, ".cache", "keras-transformer", "xla")


def test_each_cpu_type_has_its_own_folder(tmp_path):
    zen4, sapphire = tmp_path / "zen4", tmp_path / "spr"
    zen4.write_text(f"model name\t: AMD EPYC\n{ZEN4}")
    sapphire.write_text(f"model name\t: Intel Xeon\n{SAPPHIRE_RAPIDS}")
    assert machine_key(str(zen4)) == machine_key(str(zen4))
    assert machine_key(str(zen4)) != machine_key(str(sapphire))
    assert len(machine_key(str(zen4))) == 16


def test_other_compiler_flags_have_their_own_folder(tmp_path, monkeypatch):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(ZEN4)
    monkeypatch.setenv("XLA_FLAGS", "")
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_persistent_cache_directory=/a")
    plain = machine_key(str(cpuinfo))
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_persistent_cache_directory=/b")
    assert machine_key(str(cpuinfo)) == plain  # the cache's own folder aside
    monkeypatch.setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
    assert machine_key(str(cpuinfo)) != plain


def test_no_cache_and_an_unusable_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("TF_XLA_FLAGS", raising=False)
    assert use_decoding_cache(None) is None
    blocker = tmp_path / "file"
    blocker.write_text("")
    notices = io.StringIO()
    assert use_decoding_cache(str(blocker / "cache"), notices) is None
    assert notices.getvalue().startswith(f"compile cache: cannot use {blocker}")
    assert "TF_XLA_FLAGS" not in os.environ
