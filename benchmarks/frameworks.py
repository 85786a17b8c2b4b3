"""The frameworks a case runs on: numpy, PyTorch's CPU build, and dispatchtorch on
every device its backends report as ready.

A Framework gives cases one way to make inputs (`tensor`), read results back
(`to_numpy`) and wait for queued device work (`sync`), so a workload is written
once against the framework's module (`fw.mod` is numpy, torch or dispatchtorch).
"""
from __future__ import annotations

import importlib
import os

import numpy as np

# On a machine shared with other busy processes, OpenMP threads that spin while
# waiting (libgomp's default) make PyTorch's multi-threaded ops tens of times
# slower whenever one of its threads is descheduled (an MLP step measured 4 ms
# alone and 240 ms here). Waiting threads that sleep cost little when the machine
# is idle and keep the figures meaningful when it is not. Set before torch loads
# its OpenMP runtime; an explicit setting in the environment wins.
OPENMP_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}

OURS = "dispatchtorch"


class Framework:
    """One column of the results: a library, and for dispatchtorch a device."""

    def __init__(self, kind, mod, device=None, label=None, version=""):
        self.kind = kind              # "numpy" | "torch" | "dispatchtorch"
        self.mod = mod
        self.device = device          # device string for torch / dispatchtorch
        self.label = label or kind
        self.version = version
        self.sync = _nothing
        self.is_ours = kind == OURS
        self.threads = None           # PyTorch's intra-op threads
        self.activate = _nothing      # applies the thread setting; before each batch

    def __repr__(self):
        return f"<framework {self.label}>"

    def has(self, path: str) -> bool:
        """Whether the module provides a dotted attribute path such as 'nn.Linear'."""
        obj = self.mod
        name = self.mod.__name__
        for part in path.split("."):
            name = f"{name}.{part}"
            try:
                obj = getattr(obj, part)
            except AttributeError:
                # a subpackage the top-level import does not load (`import x.nn`)
                try:
                    obj = importlib.import_module(name)
                except ImportError:
                    return False
        return True

    def tensor(self, array, requires_grad=False):
        """The framework's array/tensor with array's values (a copy), on its device."""
        if self.kind == "numpy":
            return np.array(array)
        t = self.mod.tensor(np.ascontiguousarray(array), device=self.device)
        return t.requires_grad_() if requires_grad else t

    def to_numpy(self, x):
        if self.kind == "numpy":
            return np.asarray(x)
        return x.detach().cpu().numpy()

    def manual_seed(self, seed):
        if self.kind == "numpy":
            return
        self.mod.manual_seed(seed)


def _nothing():
    pass


def numpy_framework() -> Framework:
    return Framework("numpy", np, label="numpy", version=np.__version__)


def torch_framework(threads=None):
    """PyTorch's CPU build, or (None, why) when it is not installed."""
    for k, v in OPENMP_ENV.items():
        os.environ.setdefault(k, v)
    try:
        torch = importlib.import_module("torch")
    except ImportError as exc:
        return None, f"PyTorch is not installed ({exc})"
    if threads:
        torch.set_num_threads(threads)
    fw = Framework("torch", torch, device="cpu", label="torch", version=torch.__version__)
    fw.threads = torch.get_num_threads()
    return fw, ""


def thread_pools() -> list[dict]:
    """The native thread pools loaded in this process and their sizes."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    return [{"library": i.get("internal_api"), "api": i.get("user_api"),
             "threads": i.get("num_threads"), "version": i.get("version")}
            for i in threadpool_info()]


def ready_devices() -> tuple[list[str], dict[str, str]]:
    """Every device of every ready dispatchtorch backend ("cpu", "opencl:0", ...), and
    for the others the reason they cannot run."""
    import dispatchtorch.backends as backends
    devices, why_not = [], {}
    for b in backends.report():
        if b["status"] != "ready" or not b["devices"]:
            why_not[b["name"]] = f"{b['status']}: {b['error'] or 'no devices'}"
            continue
        for d in b["devices"]:
            devices.append(b["name"] if b["name"] == "cpu" else f"{b['name']}:{d['index']}")
    return devices, why_not


def select_devices(requested: str | None) -> tuple[list[str], dict[str, str]]:
    """The devices to benchmark: all ready ones, or those named in `requested`
    ('cpu,opencl' picks every device of a type, 'opencl:1' one device)."""
    devices, why_not = ready_devices()
    if not requested:
        return devices, why_not
    chosen, missing = [], {}
    for want in (w.strip() for w in requested.split(",") if w.strip()):
        hits = [d for d in devices if d == want or d.split(":")[0] == want]
        if hits:
            chosen.extend(h for h in hits if h not in chosen)
        else:
            missing[want] = why_not.get(want.split(":")[0], "no such ready device")
    return chosen, missing


def ours_framework(device: str) -> Framework:
    import dispatchtorch
    fw = Framework(OURS, dispatchtorch, device=device, label=f"ours:{device}",
                   version=dispatchtorch.__version__)
    fw.sync = _device_sync(device)
    return fw


def _device_sync(device: str):
    """A function that waits for queued work on the device (nothing on the cpu,
    whose kernels return when done)."""
    kind, _, index = device.partition(":")
    if kind == "cpu":
        return _nothing
    from dispatchtorch.dispatch.loader import get_backend
    backend = get_backend(kind).backend
    idx = int(index or 0)

    def sync():
        backend.synchronize(idx)
    return sync
