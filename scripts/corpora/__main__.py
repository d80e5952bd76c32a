"""``python3 -m scripts.corpora`` (from the repository root): same as
``python3 scripts/build_corpora.py``."""

import sys

from .cli import main

sys.exit(main())
