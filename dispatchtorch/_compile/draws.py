"""Host random draws of a replay (dropout's masks), made ahead on a worker thread.

A replay's kernels run asynchronously on a device, but a random step first draws its
values on the host (MT19937, ~5 ms for a 512K-element mask): the device runs dry
while the calling thread draws. The draws depend on nothing the graph computes, so a
replay starts them all, in their order, on one worker thread (numpy's generators
release the GIL while they fill) and each random step takes its values when it comes
to them: the host draws while it enqueues the kernels before them.

The generator ends where eager's would: every draw is made, in order, and `settle`
waits for the last before the replay returns (or raises). The draws start once the
phase's last index check has passed (a failing check raises with the effects of the
steps before it only, the generator's state included).
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

_pool = (None, None)          # (process id, executor)
_pool_lock = threading.Lock()


def _executor():
    """One worker for every replay: a single FIFO queue keeps each replay's draws in
    their order. A forked child (a DataLoader worker) makes its own: the parent's
    thread does not exist there."""
    global _pool
    pid, pool = _pool
    if pid != os.getpid():
        with _pool_lock:
            pid, pool = _pool
            if pid != os.getpid():
                pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dispatchtorch-draws")
                _pool = (os.getpid(), pool)
    return pool


class Draws:
    """The ahead-of-time draws of one phase: start() -> futures, in step order."""

    def __init__(self, draws):
        self.draws = tuple(draws)

    def start(self):
        submit = _executor().submit
        return [submit(d) for d in self.draws]

    @staticmethod
    def settle(futures):
        """Wait until every draw has been made (the generator's state is final), without
        raising: an error is raised by the step taking that draw."""
        for f in futures:
            f.exception()
