"""Work: the handle an `async_op=True` collective returns (`wait()`, `is_completed()`)."""
from __future__ import annotations

from ..futures import Future
from .engine_mpi import Pending


class Work:
    """One collective in flight: its engine's pending operation and the write-backs
    (host copies into device tensors) that follow it.

    The group holds every Work until it completes, as PyTorch's process groups do: a
    caller that drops an `async_op=True` handle must not free the staging buffer MPI is
    still writing into, and the result must still reach its tensor. Each new Work retires
    the finished ones (their write-backs run then); freeing the group waits for the rest."""

    _outputs = ()                   # what get_future()'s value lists, as PyTorch's

    def __init__(self, pending, what, group, after=()):
        self._pending, self._what, self._group = pending, what, group
        self._after = after
        self._done = False
        self._source = None
        flight = group.in_flight
        if flight:
            for w in list(flight):
                w.is_completed()
        flight.append(self)

    def wait(self, timeout=None):
        """Block until the collective finished and its outputs are written; True."""
        if self._done:
            return True
        p = self._pending
        limit = self._group.timeout_s if timeout is None else _seconds(timeout)
        wd = self._group.watchdog
        wd.arm(self._what, limit)
        try:
            if isinstance(p, Pending):
                MPI = self._group.MPI
                if p.status is not None:
                    p.requests[0].Wait(p.status)
                    self._source = p.status.Get_source()
                else:
                    MPI.Request.Waitall(p.requests)
            else:
                p.wait()
        finally:
            wd.disarm()
        self._complete()
        return True

    def _complete(self):
        p = self._pending
        if isinstance(p, Pending) and p.finish is not None:
            p.finish()
        self._done = True
        self._pending = None
        try:
            self._group.in_flight.remove(self)
        except ValueError:
            pass
        for back in self._after:
            back()

    def is_completed(self):
        """Whether it finished (finishing its write-backs if it just did); never blocks."""
        if self._done:
            return True
        p = self._pending
        if isinstance(p, Pending):
            if p.status is not None:
                if not p.requests[0].Test(p.status):
                    return False
                self._source = p.status.Get_source()
            elif not self._group.MPI.Request.Testall(p.requests):
                return False
        elif not p.done():
            return False
        self._complete()
        return True

    def is_success(self):
        return self.is_completed()

    def exception(self):
        return None

    def get_future(self):
        """A Future completed with the list of output tensors when this work is (its
        wait() waits on the work, its done() polls it)."""
        fut = Future()

        def drive(block):
            if block:
                self.wait()
            elif not self.is_completed():
                return
            if not fut._completed:
                fut.set_result(list(self._outputs))
        fut._drive = drive
        if self._done:
            drive(False)
        return fut

    def _source_rank(self):
        """The sender of a completed `irecv` (group rank)."""
        self.wait()
        return self._source

    def __repr__(self):
        return f"<Work {self._what}{' done' if self._done else ''}>"


class DoneWork(Work):
    """A collective that finished at once (a group of one rank, nothing to move)."""

    def __init__(self, what="no-op"):
        self._what, self._done, self._source, self._after = what, True, None, ()


def _seconds(t):
    return t.total_seconds() if hasattr(t, "total_seconds") else float(t)
