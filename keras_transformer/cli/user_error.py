"""The error the command line reports in one line, without a traceback."""


class UserError(Exception):
    """A mistake in the command's input (a missing file, a bad option, a run
    directory that does not match); `main` prints it and exits with status 2."""
