"""One writer per run directory: `prepare` and `train` hold `RUN_DIR/.lock`.

The lock is `fcntl.flock` on the file, which also holds the owner's process
id for the message; the kernel releases it when the process ends, however it
ends (a SIGKILL included), so a stale `.lock` file never blocks a later run.
Within one process the lock is re-entrant (`train` prepares the run first).
Several workers of one multi-worker run share the directory on purpose: only
the chief takes the lock (`train`).
"""

import contextlib
import fcntl
import os

from keras_transformer.runs.user_error import UserError

LOCK_NAME = ".lock"

_held = {}  # real path of a lock file -> [open file, depth]


@contextlib.contextmanager
def run_lock(run_dir):
    """Holds the run directory's lock while the block runs.

    Raises:
        UserError: another process holds it (the message names its id).
    """
    os.makedirs(run_dir, exist_ok=True)
    path = os.path.realpath(os.path.join(run_dir, LOCK_NAME))
    if path in _held:
        _held[path][1] += 1
        try:
            yield
        finally:
            _held[path][1] -= 1
        return
    file = open(path, "a+", encoding="utf-8")
    try:
        fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        file.seek(0)
        owner = file.read().strip() or "unknown"
        file.close()
        raise UserError(
            f"{run_dir} is in use by another process (pid {owner}, lock file "
            f"{path}); wait for it to finish or stop it, or use another "
            "--run-dir."
        ) from None
    file.seek(0)
    file.truncate()
    file.write(f"{os.getpid()}\n")
    file.flush()
    _held[path] = [file, 1]
    try:
        yield
    finally:
        del _held[path]
        file.close()  # releases the lock; the file stays, harmlessly
