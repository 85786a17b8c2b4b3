"""The `remote` device: tensors live in worker processes, one per device.

A handle is a RemoteArray (a worker and an array id); a view is a worker-side numpy
view of a storage, with its own id. Kernels are names sent over the connection: the
worker runs kernels.py (made by `dispatchtorch-backends new`) and composites.py. The
prims numpy lacks (erf, erfc, erfinv) are not offered, so dispatchtorch runs them on
the CPU reference and says so.

DISPATCHTORCH_REMOTE_WORKERS sets the number of devices (default 1); 0 leaves the
backend installed with no device, and the reason.
"""
from __future__ import annotations

import atexit
import os

import numpy as np

from dispatchtorch.backend import Backend, DeviceInfo

from .client import Worker
from .composites import COMPOSITES
from .kernels import DTYPES, KERNELS

WORKERS_ENV = "DISPATCHTORCH_REMOTE_WORKERS"


def _kernel(name):
    """The client side of a kernel: send its name and its arrays' ids; wait for the result
    (so a kernel's error is raised by the op that caused it)."""
    def kernel(*handles, **params):
        handles[0].worker.call("kernel", name, tuple(h.id for h in handles), params)
    kernel.__name__ = f"remote_{name}"
    return kernel


class RemoteBackend(Backend):
    name = "remote"
    api_version = (1, 0)
    kernels = {name: _kernel(name) for name in (*KERNELS, *COMPOSITES)}

    def __init__(self):
        self._workers: dict[int, Worker] = {}
        atexit.register(self.close)

    def devices(self):
        try:
            count = int(os.environ.get(WORKERS_ENV, "1"))
        except ValueError:
            count = -1
        if count < 0:
            self.unavailable_reason = (f"{WORKERS_ENV}={os.environ[WORKERS_ENV]!r} is not a "
                                       f"number of worker processes")
            return []
        if count == 0:
            self.unavailable_reason = f"{WORKERS_ENV}=0: no worker processes, so no devices"
            return []
        try:
            info = self.worker(0).info      # the first device must start: a driver check
        except Exception as exc:            # noqa: BLE001  (any failure means: no device)
            self.unavailable_reason = f"the worker process could not start: {exc}"
            return []
        return [DeviceInfo(i, f"worker process {i} (numpy {info['numpy']})", frozenset(DTYPES),
                           {"transport": "socketpair", "started": i in self._workers})
                for i in range(count)]

    def worker(self, index: int) -> Worker:
        w = self._workers.get(index)
        if w is None:
            w = self._workers[index] = Worker(index)
        return w

    def close(self):
        for w in self._workers.values():
            w.close()

    # -- memory --------------------------------------------------------------------------
    def empty(self, shape, dtype, device):
        w = self.worker(device)
        h = w.new_array(shape, dtype)
        w.post("empty", h.id, h.shape, dtype)
        return h

    def from_host(self, array, device, copy=True):      # always a copy: another process
        w = self.worker(device)
        h = w.new_array(array.shape, array.dtype.name)
        w.send_now("put", h.id, np.asarray(array, order="C"))
        return h

    def to_host(self, handle):
        return handle.worker.call("get", handle.id)

    def as_strided(self, storage, shape, strides, offset):
        w = storage.worker
        h = w.new_array(shape, storage.dtype)
        w.post("view", h.id, storage.id, tuple(shape), tuple(strides), offset)
        return h

    def copy_(self, dst, src):
        dst.worker.post("copy", dst.id, src.id)

    def fill_(self, dst, value):
        dst.worker.call("fill", dst.id, value)       # waits: an out-of-range value raises here

    def synchronize(self, device):
        self.worker(device).call("sync")

    def device_index(self, handle):
        return handle.worker.index
