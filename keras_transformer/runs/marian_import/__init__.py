"""Models trained elsewhere, imported as run directories: Hugging Face
Marian (OPUS-MT) folders (`import_marian`). Application layer, as `runs`."""

from keras_transformer.runs.marian_import.import_marian import (
    import_marian,
    marian_recipe,
)
from keras_transformer.runs.marian_import.marian_folder import (
    MarianFolder,
    read_marian_folder,
)

__all__ = ["MarianFolder", "import_marian", "marian_recipe", "read_marian_folder"]
