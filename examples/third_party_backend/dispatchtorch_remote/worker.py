"""The remote device itself: a process that holds arrays by id and runs kernels on them.

Started by the client as `python worker.py FD`, where FD is its end of a socketpair
(a multiprocessing Connection). It imports numpy and the kernel modules next to it,
never dispatchtorch: the device knows nothing of tensors, only of arrays and ids.

A message is `(commands, reply)`. Commands run in order; when `reply` is false
nobody waits, so a failure is kept and reported with the next reply instead.
"""
import os
import sys
import warnings
from multiprocessing.connection import Connection

import numpy as np

from composites import COMPOSITES
from kernels import KERNELS

# numpy's floating-point warnings are IEEE results here, not news for anyone
warnings.simplefilter("ignore", RuntimeWarning)


class Device:
    def __init__(self):
        self.arrays = {}
        self.launches = {}       # kernel name -> times run (what `stats` reports)

    def hello(self):
        return {"pid": os.getpid(), "numpy": np.__version__}

    def empty(self, id_, shape, dtype):
        self.arrays[id_] = np.empty(shape, dtype)

    def put(self, id_, array):
        self.arrays[id_] = array

    def view(self, id_, storage, shape, strides, offset):
        """A worker-side view: strides and offset in elements from the storage's start."""
        base = self.arrays[storage]
        if 0 in shape:      # nothing to alias; the offset may point past the storage's end
            self.arrays[id_] = np.empty(shape, base.dtype)
            return
        item = base.itemsize
        self.arrays[id_] = np.ndarray(shape, base.dtype, base, offset * item,
                                      tuple(s * item for s in strides))

    def copy(self, dst, src):
        np.copyto(self.arrays[dst], self.arrays[src], casting="unsafe")

    def fill(self, id_, value):
        self.arrays[id_].fill(value)

    def get(self, id_):
        return np.asarray(self.arrays[id_], order="C")      # (ascontiguousarray makes 0-d 1-d)

    def kernel(self, name, ids, params):
        fn = KERNELS.get(name) or COMPOSITES[name]
        fn(*[self.arrays[i] for i in ids], **params)
        self.launches[name] = self.launches.get(name, 0) + 1

    def free(self, ids):
        for i in ids:
            self.arrays.pop(i, None)

    def sync(self):
        return None

    def stats(self):
        """What the device holds and has run: arrays alive, kernel launches by name."""
        return {"arrays": len(self.arrays), "launches": dict(self.launches)}


def serve(conn):
    device = Device()
    deferred = None              # the first failure of a batch that nobody waited for
    while True:
        try:
            commands, reply = conn.recv()
        except EOFError:         # the client went away
            return
        result = failure = None
        try:
            for command, *args in commands:
                if command == "exit":
                    return
                result = getattr(device, command)(*args)
        except Exception as exc:        # reported to the client, never fatal here
            failure = (type(exc).__name__, str(exc), command)
        if not reply:
            deferred = deferred or failure
            continue
        if deferred is not None:
            failure, deferred = (deferred[0], f"an earlier asynchronous command "
                                              f"({deferred[2]}) failed: {deferred[1]}",
                                 deferred[2]), None
        conn.send(("ok", result) if failure is None else ("err", *failure))


if __name__ == "__main__":
    serve(Connection(int(sys.argv[1])))
