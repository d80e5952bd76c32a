"""An export's record (`assets.extra/record.json`, written by
`export_translator`): the search settings and limits it was exported with."""

import os

from keras_transformer.decoding.decoding_config import DecodingConfig
from keras_transformer.training.atomic_files import read_json
from savedmodels.export import RECORD_PATH


def export_record(export_dir):
    """`(record, path)` of an export's `assets.extra/record.json`; `({},
    path)` when it has none. A corrupt record fails naming it."""
    path = os.path.join(export_dir, RECORD_PATH)
    if not os.path.exists(path):
        return {}, path
    return read_json(path), path


def export_decoding(export_dir, required=True):
    """The `DecodingConfig` an export was written with (its record).

    An export without its record fails naming it (its limits are unknown),
    unless `required=False` (the checks made before anything loads, which
    leave a missing export or record to the load), which gives the paper's.
    """
    if not os.path.isdir(export_dir):
        if not required:
            return DecodingConfig()
        raise FileNotFoundError(
            f"No exported SavedModel at {export_dir}: the folder is missing."
        )
    record, path = export_record(export_dir)
    if not record:
        if not required:
            return DecodingConfig()
        raise ValueError(
            f"{path} is missing: not an export of this package, or a damaged "
            "one (its search settings and limits are unknown); export the run "
            "again."
        )
    recorded = record.get("decoding") or {}
    if not isinstance(recorded, dict):
        raise ValueError(f"{path} has no decoding settings; export the run again.")
    fields = DecodingConfig.__dataclass_fields__
    try:
        return DecodingConfig(**{k: v for k, v in recorded.items() if k in fields})
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"{path} holds decoding settings this version cannot use ({error}); "
            "export the run again."
        ) from None


# The search settings an export bounds: the setting, its limit's field in
# the record's `decoding`, and the limit's name in a message.
LIMITS = (
    ("beam_size", "max_beam_size", "maximum beam size"),
    ("max_extra_length", "max_extra_length_limit", "extra length limit"),
)


def check_export_limits(values, limits, where, names=None):
    """Refuses search settings over an export's recorded limits, which its
    signatures would refuse with a TensorFlow error.

    Args:
        values: dict. Search settings (`{"beam_size": 4}`); `None` or an
            absent setting is not checked.
        limits: dict. The record's `decoding` (`max_beam_size`,
            `max_extra_length_limit`); a missing limit is not checked.
        where: str. The record (or export), named in the message.
        names: dict or `None`. How the message names each setting (the
            command line's options); defaults to the setting's own name.

    Raises:
        ValueError: naming the setting, its value and the limit.
    """
    for name, limit_name, what in LIMITS:
        value, limit = values.get(name), limits.get(limit_name)
        if value is not None and isinstance(limit, int) and value > limit:
            shown = (names or {}).get(name, name)
            raise ValueError(
                f"{shown} {value} is above the export's {what} {limit} ({where}); "
                f"export again with a larger {limit_name}. Received: {name}={value}"
            )
