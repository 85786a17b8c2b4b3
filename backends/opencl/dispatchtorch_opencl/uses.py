"""Which queued command last wrote each buffer of a device.

A host read needs only the last command that writes its buffer (a kernel that merely
reads the same buffer may run beside the read). Buffers are keyed by `int_ptr`: views
share their storage's buffer, and a pool block reused by a later tensor keeps its
`int_ptr`. Host writes (uploads) need no record: they are queued in order on the main
queue like kernels.

Which buffer arguments a kernel may write is read off its OpenCL C signature: a
`__global` pointer not declared `const` (a kernel cannot write through a const one).

A small tensor made from a host array keeps a host copy of its bytes (`host` on its
storage handle) until a command writes its buffer: reading it back (a loss's targets,
an index) then touches neither queue. On PoCL even a read with nothing to wait for
waits for a worker thread, which the kernels keep busy (measured 0.1-14 ms).
"""
from __future__ import annotations

import re
import weakref

LIMIT = 4096          # buffers recorded before finished commands are dropped


def buffer_params(source, name):
    """(indices of the buffer (non-local pointer) parameters, of those it may write:
    not const) of kernel `name` in `source`, or None where its signature is not found."""
    m = re.search(r"__kernel\s+void\s+" + re.escape(name) + r"\s*\(([^)]*)\)", source)
    if m is None:
        return None
    params = [p.strip() for p in m.group(1).split(",")]
    # buffers: pointers outside local memory (whose arguments are not buffers)
    pointers = tuple(i for i, p in enumerate(params)
                     if "*" in p and not re.search(r"\b(__)?local\b", p))
    written = tuple(i for i in pointers
                    if not re.search(r"\b(const|__constant|constant)\b", params[i].split("*")[0]))
    return pointers, written


class BufferUses:
    """int_ptr -> event of the last queued command writing each buffer, and the host
    copies of small uploads."""

    __slots__ = ("write", "limit", "shadows")

    def __init__(self, limit=LIMIT):
        self.write = {}
        self.limit = limit
        self.shadows = {}       # int_ptr -> weakref to a storage handle holding `host`

    def keep_host_copy(self, storage, bits):
        """storage.host := a copy of bits (its buffer's contents), dropped at the first
        write into the buffer or when the handle goes."""
        p = storage.buf.int_ptr
        shadows = self.shadows
        storage.host = bits.copy()

        def gone(ref, p=p):
            if shadows.get(p) is ref:
                del shadows[p]
        shadows[p] = weakref.ref(storage, gone)

    def drop_host_copy(self, p):
        """A command writes the buffer int_ptr p: its host copy is stale."""
        ref = self.shadows.pop(p, None)
        if ref is not None:
            h = ref()
            if h is not None:
                h.host = None

    def record(self, event, written):
        """A queued command (its event) writes these buffers."""
        write = self.write
        for b in written:
            write[b.int_ptr] = event
            if self.shadows:
                self.drop_host_copy(b.int_ptr)

    def launched(self, event, params, args, buffer_types):
        """Record a kernel launch; params from buffer_params (None: every buffer
        argument counts as written). True when the record should be pruned."""
        write, shadows = self.write, self.shadows
        if params is None:
            written = [a for a in args if type(a) in buffer_types]
        else:
            written = [args[i] for i in params[1]]
        for a in written:
            if a is not None:                      # (None: an empty tensor's buffer)
                p = a.int_ptr
                write[p] = event
                if shadows:
                    self.drop_host_copy(p)
        return len(write) > self.limit

    def before_read(self, buf):
        """The event a host read of buf waits for (None: no queued command writes it)."""
        return self.write.get(buf.int_ptr)

    def snapshot(self):
        return list(self.write.items())

    def forget(self, snapshot, finished=None):
        """Drop the entries of a snapshot whose command has finished (all of them
        when finished is None), unless a newer command replaced them meanwhile."""
        write = self.write
        for k, ev in snapshot:
            if write.get(k) is ev and (finished is None or finished(ev)):
                write.pop(k, None)

    def __len__(self):
        return len(self.write)
