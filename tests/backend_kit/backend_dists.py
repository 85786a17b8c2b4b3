"""Backend distributions installed for the length of a test, without pip.

A `<dist>-<version>.dist-info` folder with an `entry_points.txt`, on sys.path, is all
importlib.metadata reads; the loader rediscovers entry points after `_entry_points`
is cleared. Only the named backends are forgotten afterwards, never the cpu: tensors
that other tests made keep their places.
"""
from __future__ import annotations

import importlib
import sys
import tomllib
from contextlib import contextmanager
from pathlib import Path

from dispatchtorch import _place
from dispatchtorch.dispatch import loader
from dispatchtorch.dispatch.registry import OPS

ROOT = Path(__file__).resolve().parents[2]
GROUP = "dispatchtorch.backends"


def write_dist(root: Path, dist: str, entry_points: dict, files: dict | None = None) -> Path:
    """Write modules (relative path -> source) and a dist-info declaring the entry points."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, source in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    info = root / f"{dist.replace('-', '_')}-0.0.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.0.0\n")
    lines = [f"[{GROUP}]"] + [f"{name} = {target}" for name, target in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return root


def forget(name: str) -> None:
    """Drop one backend's runtime, places and cached kernels; rediscover entry points."""
    loader._runtimes.pop(name, None)
    loader._entry_points = None
    if loader._pm is not None:
        for registered, _ in loader._pm.list_name_plugin():
            if registered.startswith(name + ":"):
                loader._pm.unregister(name=registered)
    for key in [k for k in _place._places if k[0] == name]:
        del _place._places[key]
    for key, place in list(_place._lookup.items()):
        if place.type == name:
            del _place._lookup[key]
    for op in OPS.values():
        op.kernels.pop(name, None)


@contextmanager
def installed(root: Path, dist: str, entry_points: dict, files: dict | None = None):
    """The backends of `entry_points` installed from `root` while the block runs."""
    write_dist(root, dist, entry_points, files)
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    for name in entry_points:
        forget(name)
    try:
        yield
    finally:
        sys.path.remove(str(root))
        for mod in [m for m, v in list(sys.modules.items())
                    if str(getattr(v, "__file__", "") or "").startswith(str(root))]:
            del sys.modules[mod]
        for name in entry_points:
            forget(name)


def core_entry_points() -> dict:
    """The backends the root pyproject.toml declares (the meta device)."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return data["project"]["entry-points"][GROUP]


def ensure_core_backends(tmp_root: Path) -> None:
    """Make the root pyproject's backend entry points discoverable when the installed
    dispatchtorch metadata predates them (an editable install made from an older
    checkout). Once installed from this checkout, this does nothing."""
    found = loader._discover()
    missing = {n: t for n, t in core_entry_points().items() if n not in found}
    if missing:
        write_dist(tmp_root, "dispatchtorch-core-entry-points", missing)
        sys.path.append(str(tmp_root))
        importlib.invalidate_caches()
        loader._entry_points = None
