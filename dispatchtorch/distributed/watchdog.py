"""The collective timeout: a daemon thread that ends the whole job when one collective
waits longer than the process group's timeout (as PyTorch's NCCL watchdog does), since a
rank blocked inside MPI cannot be interrupted. Arming costs one attribute write."""
from __future__ import annotations

import os
import sys
import threading
import time
import traceback

# the exit status of a job ended by a collective timeout (as `timeout(1)` uses)
TIMEOUT_EXIT_CODE = 124


class Watchdog:
    def __init__(self, rank, abort):
        self._rank, self._abort = rank, abort
        self._armed = None            # (what, started, timeout_s) or None
        self._main = threading.main_thread().ident
        self._thread = threading.Thread(target=self._loop, name="dispatchtorch-dist-watchdog",
                                        daemon=True)
        self._stop = False
        self._thread.start()

    def arm(self, what, timeout_s):
        self._armed = (what, time.monotonic(), timeout_s)

    def disarm(self):
        self._armed = None

    def stop(self):
        self._stop = True

    def _loop(self):
        while not self._stop:
            armed = self._armed
            if armed is None:
                time.sleep(0.05)
                continue
            what, started, limit = armed
            left = started + limit - time.monotonic()
            if left > 0:
                time.sleep(min(left, 0.05) + 0.001)
                continue
            if self._armed is armed:
                self._fire(what, limit)

    def _fire(self, what, limit):
        frame = sys._current_frames().get(self._main)
        stack = "".join(traceback.format_stack(frame)) if frame is not None else ""
        report_then_abort(
            f"[rank {self._rank}] dispatchtorch.distributed: {what} did not complete within the "
            f"process group's timeout of {limit:g} s: another rank crashed, hangs, or skipped this "
            f"collective. Ending the job (exit {TIMEOUT_EXIT_CODE}).\n"
            f"Where rank {self._rank} waited:\n{stack}", self._abort, TIMEOUT_EXIT_CODE)


# how long a rank that is about to abort the job waits for mpiexec to forward what it wrote
# (Hydra's proxy is killed by the abort and drops output it has not yet read: CI saw a
# traceback cut to its first line)
FORWARD_GRACE_S = 0.3


def report_then_abort(text, abort, code):
    """Write `text` to stderr in one write, give mpiexec time to forward it, end the job."""
    sys.stdout.flush()
    sys.stderr.flush()
    data = text.encode("utf-8", "replace")
    try:
        while data:
            data = data[os.write(2, data):]
    except OSError:
        pass
    time.sleep(FORWARD_GRACE_S)
    try:
        abort(code)
    finally:
        os._exit(code)
