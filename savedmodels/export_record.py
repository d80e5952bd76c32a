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
