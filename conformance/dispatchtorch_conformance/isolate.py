"""--isolate: the ops run in worker subprocesses, so that a kernel that kills the
interpreter (a segfault, an abort) or hangs costs one cell, not the run.

Each of the parent's `--jobs` threads keeps one worker (`python -m
dispatchtorch_conformance.isolate`) and sends it one op at a time as a JSON line; the
worker streams one JSON line per event on a private copy of stdout (anything the backend
prints goes to stderr). A worker is reused only after an op whose every check passed (or
was skipped or an expected failure), so whatever a failing op left behind in the
process (a stuck queue, a leaked buffer, a patched kernel table) cannot touch the next
op's verdict; the contract checks get a worker of their own. Starting Python and a
backend per op cost more than half the OpenCL run here (100 ops: 52 s, 20 s reused). A worker that dies is
reported as `crash` for the cell it was running, with the sample it was in and the end
of its stderr (faulthandler's traceback of the crash); a new worker carries on with the
op's remaining dtypes. The timeout is per sample: a worker silent for that long is
killed, its cell reported as `timeout` (naming the sample), and the op's remaining
dtypes are not run ("not run (hung)": one hanging kernel costs one timeout, not one per
dtype).
"""
from __future__ import annotations

import faulthandler
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from .results import FAILING, Result

CONTRACT = "contract"
STARTUP = 120.0        # seconds a worker may take to import and load the backend


def _signal_name(code):
    if code is not None and code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


def _tail(path, n=4000):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - n))
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _cell_result(job_case, cell, outcome, message, op="-"):
    if job_case == CONTRACT:
        name, _, dtype = cell.partition("/")
        return Result(f"contract/{name}", "-", dtype or "-", "-", "-", outcome, message)
    return Result(job_case, op, cell, "-", "-", outcome, message)


class Worker:
    """One worker subprocess, its event stream and its stderr log."""

    def __init__(self):
        with tempfile.NamedTemporaryFile(prefix="dtc-worker-", suffix=".log", delete=False) as log:
            self.err_path = log.name
        with open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "dispatchtorch_conformance.isolate"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1)
        self.lines = queue.Queue()
        self.started = False          # past its first op: Python and the backend are loaded
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, job):
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:       # a pipe to a killed process
                pass
        os.unlink(self.err_path)


def run_job(config, case_name, cells, timeout, op, on_result, held):
    """Run one op's cells (dtypes; contract check ids for the contract) in workers.
    held: a one-element list with the worker to use (or None); on return, the one fit
    for the next op (or None)."""
    remaining = list(cells)
    results = []

    def emit(r):
        results.append(r)
        if on_result:
            on_result(r)
    while remaining:
        worker = held[0] if held[0] is not None and case_name != CONTRACT else Worker()
        held[0] = None
        job = dict(config, case=case_name, cells=remaining)
        try:
            worker.send(job)
        except OSError:           # the kept worker is gone: a new one
            worker.close()
            worker = Worker()
            worker.send(job)
        current = sample = None
        # starting Python and the backend is not the cell's time (a loaded machine)
        deadline = time.monotonic() + (timeout if worker.started else max(timeout, STARTUP))
        clean = False
        try:
            while True:
                try:
                    line = worker.lines.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    cell = current or remaining[0]
                    where = f" in sample {sample}" if sample else ""
                    emit(_cell_result(case_name, cell, "timeout",
                                      f"no result within {timeout:g}s{where}; the worker was "
                                      f"killed", op))
                    remaining.remove(cell)
                    if case_name != CONTRACT:
                        for other in remaining:
                            emit(_cell_result(case_name, other, "skip",
                                              f"not run (hung): {case_name}/{cell} hung{where}",
                                              op))
                        remaining = []
                    break
                if line is None:
                    code = worker.proc.wait()
                    if current is not None or remaining:
                        cell = current or remaining[0]
                        tail = _tail(worker.err_path)
                        where = sample or f"{case_name}/{cell}"
                        emit(_cell_result(case_name, cell, "crash",
                                          f"the worker died ({_signal_name(code)}) while running "
                                          f"{where}" + (f"; its last output: {tail}"
                                                        if tail else ""), op))
                        remaining.remove(cell)
                    break
                msg = json.loads(line)
                if "start" in msg:
                    current, sample = msg["start"], None
                    deadline = time.monotonic() + timeout
                elif "sample" in msg:
                    sample = msg["sample"]
                    deadline = time.monotonic() + timeout
                elif "result" in msg:
                    emit(Result.from_dict(msg["result"]))
                elif "end" in msg:
                    remaining.remove(msg["end"])
                    current = sample = None
                elif "done" in msg:
                    worker.started = True
                    clean = not any(r.outcome in FAILING for r in results)
                    break
                elif "fatal" in msg:
                    for cell in remaining:
                        emit(_cell_result(case_name, cell, "error", msg["fatal"], op))
                    remaining = []
                    break
        finally:
            if clean and case_name != CONTRACT:
                held[0] = worker
            else:
                worker.close()
    return results


def run_isolated(config, jobs, timeout, workers=1, on_result=None):
    """jobs: [(case name, op, cells)]; runs them `workers` at a time."""
    lock = threading.Lock()
    kept = threading.local()          # each pool thread's worker between ops
    every = []

    def report(r):
        if on_result:
            with lock:
                on_result(r)

    def one(job):
        name, op, cells = job
        if not hasattr(kept, "slot"):
            kept.slot = [None]
            with lock:
                every.append(kept.slot)
        return run_job(config, name, cells, timeout, op, report, kept.slot)
    try:
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            return [r for part in pool.map(one, jobs) for r in part]
    finally:
        for slot in every:
            if slot[0] is not None:
                slot[0].close()


# -- the worker ---------------------------------------------------------------------------------

def _run_one(job, send, targets):
    from . import contract, runner
    from .xfails import PatternList
    key = (job["backend"], job["device"], job.get("strict", False))
    if key not in targets:
        try:
            targets[key] = runner.Target(*key)
        except runner.SetupError as exc:
            send(fatal=str(exc))
            return
    target = targets[key]
    skips = PatternList.load(job["skips"]) if job.get("skips") else None
    if job["case"] == CONTRACT:
        for cell in job["cells"]:
            send(start=cell)
            send(result=contract.run_one(target, cell).as_dict())
            send(end=cell)
        return
    from .cases import by_name
    case = by_name()[job["case"]]
    for dtype in job["cells"]:
        send(start=dtype)
        for r in runner.run_cell(target, case, dtype, skips=skips,
                                 on_sample=lambda sid: send(sample=sid)):
            send(result=r.as_dict())
        send(end=dtype)


def _worker():
    """Run the jobs that come on stdin, one JSON line each, until it closes."""
    jobs = sys.stdin
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)                 # whatever the backend prints must not corrupt the stream
    faulthandler.enable(file=sys.stderr)    # a crash leaves its traceback in the log

    def send(**msg):
        out.write(json.dumps(msg, default=str) + "\n")
        out.flush()
    targets = {}
    for line in jobs:
        _run_one(json.loads(line), send, targets)
        send(done=True)
    return 0


if __name__ == "__main__":
    sys.exit(_worker())
