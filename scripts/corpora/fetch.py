"""Getting the Debian packages: ``apt-get download`` (or a folder of .deb files)
and ``dpkg-deb -x`` into a work folder.

What belongs here: everything that runs an external command or reads a .deb
file's control fields.  Nothing here reads the unpacked text.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .config import PACKAGES


def run(cmd: list[str], cwd: Path | None = None) -> str:
    """Run `cmd`, echoing it to stderr as ``+ cmd``, and return its stdout.

    Args:
        cmd: the command and its arguments.
        cwd: the folder to run it in (default: the current folder).

    Returns:
        The command's standard output, as text.

    Raises:
        subprocess.CalledProcessError: if the command exits with a non-zero
            status.
    """
    print("+", " ".join(cmd), file=sys.stderr)
    res = subprocess.run(cmd, cwd=cwd, check=True, text=True, stdout=subprocess.PIPE)
    return res.stdout


def parse_fields(text: str) -> dict[str, str]:
    """Parse ``dpkg-deb -f`` output (``Key: value`` lines) into a dict.

    Args:
        text: the output of ``dpkg-deb -f DEB FIELD ...``.

    Returns:
        ``{key: value}``, both stripped of surrounding whitespace.
    """
    info = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        info[key.strip()] = value.strip()
    return info


class Package:
    """A Debian binary package unpacked into a folder.

    Args:
        deb: the ``.deb`` file.
        root: the folder it was unpacked into (``dpkg-deb -x deb root``).

    Attributes:
        name: the binary package name (``Package`` field).
        version: the package version (``Version`` field).
        source: the source package name (``Source`` field without its
            version, or `name` when the field is absent).
    """

    def __init__(self, deb: Path, root: Path):
        self.deb = deb
        self.root = root
        info = parse_fields(
            run(["dpkg-deb", "-f", str(deb), "Package", "Version", "Source"])
        )
        self.name = info["Package"]
        self.version = info["Version"]
        self.source = (info.get("Source") or self.name).split()[0]

    @property
    def copyright_text(self) -> str:
        """The package's ``/usr/share/doc/<name>/copyright`` file."""
        path = self.root / "usr/share/doc" / self.name / "copyright"
        return path.read_text(encoding="utf-8")


def fetch_packages(
    work: Path, debs_dir: Path | None, apt_update: bool
) -> dict[str, Package]:
    """Get and unpack every package of `config.PACKAGES`.

    Args:
        work: an empty work folder; the .deb files go to ``work/debs`` and
            each package is unpacked into ``work/root/<name>``.
        debs_dir: a folder holding exactly one ``<name>_*.deb`` per package,
            used instead of ``apt-get download``; None to download.
        apt_update: run ``apt-get update`` before downloading (without it,
            ``apt-get update`` is run once if the download fails).

    Returns:
        ``{package name: Package}`` in `config.PACKAGES` order.
    """
    deb_dir = work / "debs"
    deb_dir.mkdir()
    if debs_dir is not None:
        for name in PACKAGES:
            found = sorted(debs_dir.glob(f"{name}_*.deb"))
            if len(found) != 1:
                sys.exit(f"expected exactly one {name}_*.deb in {debs_dir}")
            shutil.copy(found[0], deb_dir)
    else:
        # Let the unprivileged _apt user write the downloads (avoids a warning).
        os.chmod(work, 0o755)
        os.chmod(deb_dir, 0o777)
        if apt_update:
            run(["apt-get", "update"])
        try:
            run(["apt-get", "download", *PACKAGES], cwd=deb_dir)
        except subprocess.CalledProcessError:
            if apt_update:
                raise
            print("apt-get download failed; apt-get update, retry", file=sys.stderr)
            run(["apt-get", "update"])
            run(["apt-get", "download", *PACKAGES], cwd=deb_dir)
    packages = {}
    for name in PACKAGES:
        found = sorted(deb_dir.glob(f"{name}_*.deb"))
        if len(found) != 1:
            sys.exit(
                f"expected exactly one {name}_*.deb in {deb_dir}, found {len(found)}"
            )
        (deb,) = found
        root = work / "root" / name
        root.mkdir(parents=True)
        run(["dpkg-deb", "-x", str(deb), str(root)])
        packages[name] = Package(deb, root)
        print(f"{name} {packages[name].version}")
    return packages
