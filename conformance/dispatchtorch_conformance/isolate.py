"""--isolate: every op in a subprocess of its own, so that a kernel that kills the
interpreter (a segfault, an abort) or hangs costs one cell, not the run.

The parent starts `python -m dispatchtorch_conformance.isolate JOB` per op; the worker
streams one JSON line per event on a private copy of stdout (anything the backend
prints goes to stderr). A worker that dies is reported as `crash` for the cell it
was running, with the sample it was in and the end of its stderr (faulthandler's
traceback of the crash); a new worker carries on with the op's remaining dtypes. The
timeout is per sample: a worker silent for that long is killed, its cell reported as
`timeout` (naming the sample), and the op's remaining dtypes are not run ("not run
(hung)": one hanging kernel costs one timeout, not one per dtype).
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

from .results import Result

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


def run_job(config, case_name, cells, timeout, op="-", on_result=None):
    """Run one op's cells (dtypes; contract check ids for the contract) in workers."""
    remaining = list(cells)
    results = []

    def emit(r):
        results.append(r)
        if on_result:
            on_result(r)
    while remaining:
        job = dict(config, case=case_name, cells=remaining)
        with tempfile.NamedTemporaryFile(prefix="dtc-worker-", suffix=".log", delete=False) as log:
            err_path = log.name
        with open(err_path, "wb") as err:
            proc = subprocess.Popen([sys.executable, "-m", "dispatchtorch_conformance.isolate",
                                     json.dumps(job)], stdout=subprocess.PIPE, stderr=err,
                                    stdin=subprocess.DEVNULL, text=True, bufsize=1)
        lines = queue.Queue()

        def pump():
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)
        threading.Thread(target=pump, daemon=True).start()
        current = sample = None
        # starting Python and the backend is not the cell's time (a loaded machine)
        deadline = time.monotonic() + max(timeout, STARTUP)
        try:
            while True:
                try:
                    line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    proc.kill()
                    proc.wait()
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
                    code = proc.wait()
                    if current is not None or (code != 0 and remaining):
                        cell = current or remaining[0]
                        tail = _tail(err_path)
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
                elif "fatal" in msg:
                    for cell in remaining:
                        emit(_cell_result(case_name, cell, "error", msg["fatal"], op))
                    remaining = []
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
            os.unlink(err_path)
    return results


def run_isolated(config, jobs, timeout, workers=1, on_result=None):
    """jobs: [(case name, op, cells)]; runs them `workers` at a time."""
    lock = threading.Lock()

    def report(r):
        if on_result:
            with lock:
                on_result(r)

    def one(job):
        name, op, cells = job
        return run_job(config, name, cells, timeout, op, report)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return [r for part in pool.map(one, jobs) for r in part]


# -- the worker ---------------------------------------------------------------------------------

def _worker(job):
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)                 # whatever the backend prints must not corrupt the stream
    faulthandler.enable(file=sys.stderr)    # a crash leaves its traceback in the log

    def send(**msg):
        out.write(json.dumps(msg, default=str) + "\n")
        out.flush()
    from . import contract, runner
    from .xfails import PatternList
    try:
        target = runner.Target(job["backend"], job["device"], job.get("strict", False))
    except runner.SetupError as exc:
        send(fatal=str(exc))
        return 3
    skips = PatternList.load(job["skips"]) if job.get("skips") else None
    if job["case"] == CONTRACT:
        for cell in job["cells"]:
            send(start=cell)
            send(result=contract.run_one(target, cell).as_dict())
            send(end=cell)
        return 0
    from .cases import by_name
    case = by_name()[job["case"]]
    for dtype in job["cells"]:
        send(start=dtype)
        for r in runner.run_cell(target, case, dtype, skips=skips,
                                 on_sample=lambda sid: send(sample=sid)):
            send(result=r.as_dict())
        send(end=dtype)
    return 0


if __name__ == "__main__":
    sys.exit(_worker(json.loads(sys.argv[1])))
