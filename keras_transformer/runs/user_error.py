"""The application layer's error for a mistake in what the caller gave."""


class UserError(ValueError):
    """A mistake in the input of a library call (a missing file, a bad
    option, a run directory that does not match, a run of the other task):
    one message that names the bad value.

    A `ValueError`, so a caller catches it as one; the command line prints
    its message as one line and exits with status 2 (`cli.error_report`).
    """


class MissingFileError(UserError, FileNotFoundError):
    """A file or folder the call names does not exist (also a
    `FileNotFoundError`)."""
