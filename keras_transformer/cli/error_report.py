"""The command line's one error path: every exception becomes one line.

`report_error` is the only place that turns an exception into what the user
sees. A mistake in the input (`UserError`, a `ValueError` from a library
check, a corrupt file, a missing file, a full disk) is one line naming the
file, option or value, exit status 2. Anything else is an internal error: one
line saying so and where its full traceback was written (the run directory's
`logs/`, else a temporary file), exit status 1. `--debug` also prints the
traceback.
"""

import datetime
import errno
import os
import sys
import tempfile
import traceback

from keras_transformer.runs.user_error import UserError

USER_ERROR = 2
INTERNAL_ERROR = 1
INTERRUPTED = 130

# Errors of the operating system a user causes and can fix, by errno.
_USER_ERRNOS = {
    errno.ENOENT,
    errno.EACCES,
    errno.EPERM,
    errno.EISDIR,
    errno.ENOTDIR,
    errno.EROFS,
    errno.EEXIST,
    errno.ENAMETOOLONG,
    errno.ENOTEMPTY,
}


def describe_error(error, command=None):
    """`(message, status)` of an exception, or `(None, INTERNAL_ERROR)` for an
    internal error (whose message `report_error` writes).

    Args:
        error: the exception.
        command: str or `None`. The subcommand, for the interrupt message.
    """
    from keras_transformer.training.atomic_files import is_disk_full

    if isinstance(error, KeyboardInterrupt):
        again = (
            "the lines translated so far are in the output's .partial file "
            "(a new run starts over)"
            if command == "translate"
            else "run the same command again to resume"
        )
        return f"interrupted; {again}.", INTERRUPTED
    if isinstance(error, Exception) and is_disk_full(error):
        name = getattr(error, "filename", None)
        where = f" writing {name}" if name else ""
        return (
            f"the disk is full (no space left on device){where}; the files "
            "written before are intact. Free some space and run the command "
            "again.",
            USER_ERROR,
        )
    if isinstance(error, (UserError, ValueError)):
        return str(error), USER_ERROR
    if isinstance(error, FileNotFoundError) and error.errno is None:
        return str(error), USER_ERROR  # the library's message, naming the path
    if isinstance(error, OSError) and error.errno in _USER_ERRNOS:
        name = error.filename or ""
        other = f" -> {error.filename2}" if error.filename2 else ""
        return f"{error.strerror or error}: {name}{other}", USER_ERROR
    return None, INTERNAL_ERROR


def report_error(error, command, run_dir=None, debug=False, stream=None):
    """Prints `error` as one line on `stream` (stderr) and returns the exit
    status; see the module docstring.

    Args:
        error: the exception.
        command: str. The subcommand, named at the start of the line.
        run_dir: str or `None`. The command's run directory: an internal
            error's traceback goes to its `logs/` when it holds a run.
        debug: bool. Also print the traceback.
        stream: a text stream. Defaults to `sys.stderr` at call time.
    """
    stream = sys.stderr if stream is None else stream
    if debug:
        traceback.print_exception(error, file=stream)
    message, status = describe_error(error, command)
    if status == INTERNAL_ERROR:
        path = write_traceback(error, run_dir)
        summary = str(error).strip().splitlines()
        detail = f": {summary[0][:200]}" if summary else ""
        message = (
            f"internal error ({type(error).__name__}{detail}); this is a bug, "
            f"not a mistake in the input. The full traceback is in {path}."
        )
    line = " ".join(str(message).split())  # one line, whatever the library wrote
    print(f"keras-transformer {command}: error: {line}", file=stream)
    return status


def write_traceback(error, run_dir=None):
    """Writes `error`'s traceback to `<run_dir>/logs/` when `run_dir` holds a
    run (a `recipe.json`), else to a temporary file; returns the path."""
    text = "".join(traceback.format_exception(error))
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    name = f"traceback-{stamp}-{os.getpid()}.txt"
    if run_dir and os.path.isfile(os.path.join(run_dir, "recipe.json")):
        try:
            logs = os.path.join(run_dir, "logs")
            os.makedirs(logs, exist_ok=True)
            path = os.path.join(logs, name)
            with open(path, "w", encoding="utf-8") as file:
                file.write(text)
            return path
        except OSError:
            pass  # a full or read-only disk: a temporary file instead
    handle, path = tempfile.mkstemp(prefix="keras-transformer-", suffix=f"-{name}")
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        file.write(text)
    return path
