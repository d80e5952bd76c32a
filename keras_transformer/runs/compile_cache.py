"""The decoding search's compilations, kept on disk for the next process.

XLA compiles a search once per batch shape; TensorFlow's persistent
compilation cache (`training.use_compilation_cache`) keeps the executables,
so that a later `parse` process loads each one (quicker, though the function
is still lowered to HLO to make the key; figures in docs/experiment-log.md,
"Whole-process parse and translate") instead of compiling it. The search is
traced once under a name that is the same in every process
(`compiled_translate`'s `dynamic_shapes` with `jit_compile`), so the cache's
keys match.

The cache is per machine, not per run: the key holds the whole program
(model shapes, decoding settings), so runs of one recipe share executables.
It lives in the package's cache folder (`package_cache`:
`$KERAS_TRANSFORMER_CACHE`, else `$XDG_CACHE_HOME/keras-transformer`, else
`~/.cache/keras-transformer`; empty turns it off) under `xla/`, in a folder
per CPU, TensorFlow version and XLA flags: an XLA:CPU executable is compiled
for its host's instructions, so a cache on a shared home folder never serves
another CPU type (a "foreign" cache is a folder that is never read). Nothing
prunes it: it holds an entry per batch shape of a search (`gum_parsing`:
12 shapes for 491 sentences, 20 for 2,500; entry sizes in docs/experiment-log.md,
"Whole-process parse and translate"); remove the folder to reclaim it.

Using it changes the process: `TF_XLA_FLAGS` names the folder from then on
(`use_compilation_cache`), for this process's XLA compilations and its
children's, training's included if it runs later in the same process.

A damaged entry (a file cut short by a full disk, or overwritten) would make
TensorFlow fail the search with `OutOfRangeError`, so `use_decoding_cache`
checks each entry's protocol-buffer framing before TensorFlow reads any, and
removes a damaged one with one line on `notices`: it compiles again.
"""

import hashlib
import mmap
import os
import platform

from keras_transformer.package_cache import package_cache_folder
from keras_transformer.precisions import cpu_fields
from keras_transformer.training.xla_compilation import (
    CACHE_FILE_PREFIX,
    CACHE_FLAG,
    use_compilation_cache,
)


def cache_root(environ=None):
    """The folder of the decoding cache (`xla/` in the package's cache
    folder), or `None` where caching is off."""
    folder = package_cache_folder(environ)
    return None if folder is None else os.path.join(folder, "xla")


def machine_key(cpuinfo_path="/proc/cpuinfo"):
    """A short name of what an XLA:CPU executable depends on: the CPU's model
    and instruction flags, the machine type, TensorFlow's version and the XLA
    compiler flags (`XLA_FLAGS`, `TF_XLA_FLAGS`)."""
    import tensorflow as tf

    fields = cpu_fields(cpuinfo_path)
    # XLA's key holds no compiler options: executables built under other
    # `XLA_FLAGS` (or `TF_XLA_FLAGS`, the cache's own flag aside) go elsewhere.
    tf_xla_flags = [
        flag
        for flag in os.environ.get("TF_XLA_FLAGS", "").split()
        if not flag.startswith(CACHE_FLAG + "=")
    ]
    text = "\n".join(
        [
            platform.machine(),
            tf.__version__,
            *(fields[k] for k in sorted(fields)),
            os.environ.get("XLA_FLAGS", ""),
            " ".join(tf_xla_flags),
        ]
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _read_varint(data, position):
    """A protocol-buffer varint at `position`: `(value, next position)`;
    raises `ValueError` past the end or after 10 bytes."""
    value = shift = 0
    for index in range(position, min(position + 10, len(data))):
        byte = data[index]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, index + 1
        shift += 7
    raise ValueError("a varint runs past the end")


def is_whole_entry(data):
    """Whether `data` is framed as a whole `XlaSerializedCacheEntry`: a
    sequence of well-formed fields that ends exactly at the end, with its
    key (field 1) and its executable (field 3). A file cut short, or bytes
    that are not a protocol buffer, are not."""
    position, fields = 0, set()
    try:
        while position < len(data):
            tag, position = _read_varint(data, position)
            number, wire_type = tag >> 3, tag & 7
            if wire_type == 0:
                _, position = _read_varint(data, position)
            elif wire_type == 1:
                position += 8
            elif wire_type == 2:
                length, position = _read_varint(data, position)
                position += length
            elif wire_type == 5:
                position += 4
            else:
                return False
            fields.add(number)
    except ValueError:
        return False
    return position == len(data) and {1, 3} <= fields


def remove_damaged_entries(directory):
    """Removes the cache entries in `directory` that are not whole
    (`is_whole_entry`); returns their file names.

    Only finished entries are read (`xla_compile_cache__*.pb`): TensorFlow
    writes an entry under a temporary name (the final one with a suffix
    ending in `.tmp`) and renames it, so a file another process is still
    writing is left alone. An entry is mapped, not read: the check touches
    its field headers only."""
    try:
        names = sorted(os.listdir(directory))
    except FileNotFoundError:
        return []
    damaged = []
    for name in names:
        if not (name.startswith(CACHE_FILE_PREFIX) and name.endswith(".pb")):
            continue
        path = os.path.join(directory, name)
        try:
            with open(path, "rb") as f:
                if os.fstat(f.fileno()).st_size == 0:
                    whole = False
                else:
                    with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                        whole = is_whole_entry(data)
        except (OSError, ValueError):
            whole = False
        if not whole:
            damaged.append(name)
            try:
                os.remove(path)
            except OSError:
                pass
    return damaged


def use_decoding_cache(root="auto", notices=None):
    """Points XLA's persistent cache at this machine's folder under `root`
    for the searches this process will compile, after removing damaged
    entries there.

    Takes effect only if no TensorFlow function has run in this process yet
    (TensorFlow reads its XLA flags once); a folder already named in
    `TF_XLA_FLAGS` wins (`use_compilation_cache`) and is checked the same way.

    Args:
        root: str, `"auto"` (`cache_root()`, the package's cache folder)
            or `None` (no cache).
        notices: a text stream for one line naming damaged entries removed,
            or for a cache folder that cannot be made; `None`: silent.

    Returns:
        The cache folder in effect, or `None`.
    """
    root = cache_root() if root == "auto" else root
    if root is None:
        return None
    try:
        directory = use_compilation_cache(os.path.join(root, machine_key()))
    except OSError as error:
        if notices is not None:
            notices.write(
                f"compile cache: cannot use {root} ({error.strerror}); "
                "compiling without it\n"
            )
        return None
    damaged = remove_damaged_entries(directory)
    if damaged and notices is not None:
        notices.write(
            f"compile cache: removed {len(damaged)} damaged entr"
            f"{'y' if len(damaged) == 1 else 'ies'} from {directory} "
            f"(e.g. {damaged[0]}); they compile again\n"
        )
    return directory
