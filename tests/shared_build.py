"""One build of an expensive, read-only test artefact per test run, shared by
the pytest-xdist workers.

Session fixtures run once per worker: with `-n 2`, each worker would export
the same SavedModel. `build_once` builds into a folder above the workers' own
temporary folders under a file lock: the first worker to ask builds, the
other waits for it and reuses the folder (the pytest-xdist documentation's
recipe for session fixtures). Without pytest-xdist, or without `fcntl`, it
builds in the session's own temporary folder.
"""

import os
import shutil

try:
    import fcntl
except ImportError:  # not POSIX: each worker builds its own
    fcntl = None

_DONE = ".built"


def build_once(tmp_path_factory, name, build):
    """`folder` after `build(folder)` has run once in this test run.

    `build` fills the empty folder `folder`; a build that raised is cleared
    and tried again by the next caller. Callers must not write into
    `folder`."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER") and fcntl is not None:
        root = root.parent
    folder = root / name
    with open(root / f"{name}.lock", "w") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when `lock` closes
        if not (folder / _DONE).exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            (folder / _DONE).touch()
    return folder
