"""The client end of one worker process: start it, send it commands, free its arrays.

Commands that cannot fail in a way the caller must see at once (allocate, view,
copy, free) are queued and go out with the next command that waits for a reply (a
kernel, a fill, a read), so an op costs one round trip. Array ids are chosen here,
so nothing waits for the worker to name an array.
"""
from __future__ import annotations

import builtins
import collections
import itertools
import os
import subprocess
import sys
import threading
import weakref
from multiprocessing import Pipe
from pathlib import Path

WORKER = Path(__file__).with_name("worker.py")
START_TIMEOUT_S = 60
MAX_QUEUED = 256


class RemoteError(RuntimeError):
    """A worker failure that has no builtin exception type of the same name."""


_live: "weakref.WeakSet[Worker]" = weakref.WeakSet()


def _orphan_after_fork():
    """A forked child shares its parent's connections: it must not touch them."""
    for w in list(_live):
        w.forked = w.closed = True


os.register_at_fork(after_in_child=_orphan_after_fork)


def _rebuild(kind, message):
    """The worker's exception as the same builtin type, else as a RemoteError."""
    cls = getattr(builtins, kind, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(message)
        except TypeError:            # a builtin whose constructor wants more than a message
            pass
    return RemoteError(f"{kind}: {message}")


class RemoteArray:
    """A handle: the id of an array held by a worker. Dropping it frees the array."""

    __slots__ = ("worker", "id", "shape", "dtype", "__weakref__")

    def __init__(self, worker, id_, shape, dtype):
        self.worker, self.id, self.shape, self.dtype = worker, id_, tuple(shape), dtype

    def __repr__(self):
        return f"<remote:{self.worker.index} array #{self.id} {self.dtype}{list(self.shape)}>"

    def __del__(self):
        self.worker.release(self.id)


class Worker:
    """One worker process and the connection to it (thread-safe)."""

    def __init__(self, index: int):
        self.index = index
        self._lock = threading.Lock()
        self._queue: list = []
        self._freed = collections.deque()        # ids released by __del__, sent later
        self._ids = itertools.count(1)
        self.conn, child = Pipe(duplex=True)
        self.process = subprocess.Popen([sys.executable, str(WORKER), str(child.fileno())],
                                        pass_fds=(child.fileno(),), stdin=subprocess.DEVNULL)
        child.close()
        self.closed = self.forked = False
        _live.add(self)
        try:
            self.conn.send(([("hello",)], True))
            answered = self.conn.poll(START_TIMEOUT_S)
        except OSError:
            answered = True          # it is gone already; recv says so
        if not answered:
            self.close()
            raise RemoteError(f"remote worker {index} did not answer within {START_TIMEOUT_S} s")
        self.info = self._receive()

    # -- handles -------------------------------------------------------------------------
    def new_array(self, shape, dtype) -> RemoteArray:
        return RemoteArray(self, next(self._ids), shape, dtype)

    def release(self, id_: int) -> None:
        self._freed.append(id_)      # no I/O here: __del__ may run in the middle of a send

    # -- commands ------------------------------------------------------------------------
    def post(self, *command) -> None:
        """Queue a command; it runs before the next one that waits."""
        with self._lock:
            self._queue.append(command)
            if len(self._queue) >= MAX_QUEUED:
                self._send(False)

    def send_now(self, *command) -> None:
        """Send queued commands and this one now, without waiting (its arguments are
        pickled at once, so the caller may reuse them)."""
        with self._lock:
            self._queue.append(command)
            self._send(False)

    def call(self, *command):
        """Run queued commands and this one; return its result or raise its error."""
        with self._lock:
            self._queue.append(command)
            self._send(True)
            return self._receive()

    def _receive(self):
        try:
            status, *rest = self.conn.recv()
        except (EOFError, OSError):
            raise self._gone() from None
        if status == "ok":
            return rest[0]
        kind, message, failed = rest
        exc = _rebuild(kind, message)
        if hasattr(exc, "add_note"):
            exc.add_note(f"raised by remote worker {self.index} (pid {self.process.pid}) "
                         f"running {failed!r}")
        raise exc

    def _send(self, reply):
        if self.forked:
            raise RemoteError(f"remote worker {self.index} belongs to the parent process; a "
                              f"forked process cannot use its tensors (start processes with "
                              f"'spawn', or move tensors to the CPU before forking)")
        batch = self._queue
        self._queue = []
        freed = []
        while self._freed:
            freed.append(self._freed.popleft())
        if freed:
            # after the queued commands, which may use arrays dropped since; before the last
            # one, which is being issued now (its handles are alive) and gives the result
            batch.insert(len(batch) - 1, ("free", freed))
        try:
            self.conn.send((batch, reply))
        except OSError:
            raise self._gone() from None

    def _gone(self):
        try:
            code = self.process.wait(timeout=2)     # a closed connection: it is exiting
        except subprocess.TimeoutExpired:
            code = None
        status = "is still running but closed its end" if code is None else \
            f"exited with status {code} (its stderr says why)"
        return RemoteError(f"remote worker {self.index} (pid {self.process.pid}) {status}; "
                           f"its arrays are lost")

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            with self._lock:
                self.conn.send(([("exit",)], False))
        except OSError:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.conn.close()
