"""Zip extraction that refuses entries escaping the target directory (zip slip): a hub
archive comes from the network. Any `..` in an entry's name is refused, even one that
normalises to a path inside the target: PyTorch lets `repo-main/../x` through and zipfile
then writes it as `repo-main/x`, not where the archive said; such an archive is hostile."""
from __future__ import annotations

import os
import re
from pathlib import Path

_SEP = re.compile(r"[/\\]")


def _check(name, root):
    norm = os.path.normpath(name)
    if norm.startswith(("/", "\\")) or (len(norm) >= 2 and norm[1] == ":" and norm[0].isalpha()):
        raise ValueError(f"Archive entry has absolute path: {name}")
    if ".." in _SEP.split(name):
        raise ValueError(f"Archive entry contains directory traversal: {name}")
    if not (root / norm).resolve(strict=False).is_relative_to(root):
        raise ValueError(f"Archive entry escapes target directory: {name}")


def safe_extract_zip(zf, extract_to):
    """Extract every member of `zf` under `extract_to` after checking all their names, so a
    bad archive raises ValueError before anything is written (PyTorch checks as it goes)."""
    root = Path(extract_to).resolve(strict=False)
    members = zf.infolist()
    for member in members:
        _check(member.filename, root)
    for member in members:
        zf.extract(member, root)
