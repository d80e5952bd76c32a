"""Loading an exported SavedModel, with a damaged one refused naming it."""

import os

from keras_transformer.training.corrupt_file_error import CorruptFileError

_EXPECTED = "a loadable SavedModel (exported with `keras-transformer export`)"
_HINT = "export the run again"


def load_saved_model(export_dir):
    """`tf.saved_model.load(export_dir)`, with tensorflow-text's ops
    registered, and a missing, truncated or corrupt file refused naming it.

    Raises:
        CorruptFileError: `saved_model.pb` or the variables are missing,
            truncated or unreadable.
    """
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the tokenizer ops)

    graph = os.path.join(export_dir, "saved_model.pb")
    index = os.path.join(export_dir, "variables", "variables.index")
    for path in (graph, index):
        if not os.path.isfile(path):
            raise CorruptFileError(export_dir, _EXPECTED, f"no {path}", _HINT)
    try:
        return tf.saved_model.load(export_dir)
    except (OSError, ValueError, IndexError, tf.errors.OpError) as error:
        # e.g. IndexError "Read less bytes than requested" (a truncated
        # variables file), DataLossError, a protobuf DecodeError (ValueError).
        reason = " ".join(str(error).split())[:200] or type(error).__name__
        raise CorruptFileError(
            _damaged_file(export_dir), _EXPECTED, reason, _HINT
        ) from None


def _damaged_file(export_dir):
    """The file to name: the variables data when the graph parses, since
    that is what a truncated copy loses first."""
    variables = os.path.join(export_dir, "variables")
    data = sorted(
        name for name in os.listdir(variables) if name.startswith("variables.data")
    )
    return os.path.join(variables, data[0]) if data else variables
