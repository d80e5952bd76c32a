"""Constants of the corpus build: paths, Debian packages, split sizes, limits.

Everything another module of ``scripts.corpora`` tunes or names lives here, so
that the extraction, splitting and templating modules agree on one value.
"""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / "pipelines" / "data"

DING_PKG = "trans-de-en"
LO_PKGS = {
    "en": "libreoffice-help-en-us",
    "de": "libreoffice-help-de",
    "fr": "libreoffice-help-fr",
}
LO_HELP_DIRS = {"en": "en-US", "de": "de", "fr": "fr"}
PACKAGES = [DING_PKG, *LO_PKGS.values()]

# Split assignment: bucket = int(sha256(salt + key)[:8], 16) % 1000.
LO_TEST_BUCKETS = 40  # buckets [0, 40) -> test
LO_DEV_BUCKETS = 40  # buckets [40, 80) -> dev
DING_TEST_BUCKETS = 55
DING_DEV_BUCKETS = 55

MAX_WORDS = 200  # pairs with more words on either side are dropped
MAX_LEN_RATIO = 3.0  # LibreOffice: char-length ratio limit (both sides > 30 chars)
FIXTURE_SIZE = 300
FIXTURE_MAX_WORDS = 30

SPLITS = ("train", "dev", "test")
