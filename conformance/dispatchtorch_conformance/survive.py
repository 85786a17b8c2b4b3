"""A run that survives its backend: without --isolate the suite runs in a forked child
that journals every cell, sample and result; if the child dies (a segfault in a
kernel, an abort, an exception that escapes the harness), the parent writes the
report so far from the journal, names the cell and sample that were running, and
exits with status 3 (distinct from 1, "a check failed")."""
from __future__ import annotations

import atexit
import faulthandler
import json
import os
import signal
import sys
import tempfile
import time
import traceback

from .results import Result

CRASH = 3


class Journal:
    """What the child has done so far, one JSON object per line, flushed as it goes."""

    def __init__(self, path):
        self.f = open(path, "w", encoding="utf-8", buffering=1)

    def _put(self, **msg):
        self.f.write(json.dumps(msg, default=str) + "\n")

    def begin(self, target, args):
        self._put(begin={"backend": target.describe(), "reference": target.reference.as_dict(),
                         "dtypes": sorted(target.dtypes)})

    def start(self, name):
        self._put(start=name)

    def start_cell(self, case, dtype):
        self._put(start=f"{case.name}/{dtype}", case=case.name, op=case.op, dtype=dtype)

    def sample(self, sample_id):
        self._put(sample=sample_id)

    def results(self, results):
        for r in results:
            self._put(result=r.as_dict())
        self.f.flush()


def _read(path):
    state = {"begin": None, "results": [], "start": None, "sample": None, "cell": None}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    msg = json.loads(line)
                except ValueError:          # the last line, cut off by the crash
                    break
                if "begin" in msg:
                    state["begin"] = msg["begin"]
                elif "result" in msg:
                    state["results"].append(Result.from_dict(msg["result"]))
                    state["sample"] = None
                elif "start" in msg:
                    state["start"], state["sample"], state["cell"] = msg["start"], None, msg
                elif "sample" in msg:
                    state["sample"] = msg["sample"]
    except OSError:
        pass
    return state


def _how(status):
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            return signal.Signals(sig).name
        except ValueError:
            return f"signal {sig}"
    return f"exit status {os.WEXITSTATUS(status)}"


def run_supervised(body, args):
    """Run body(journal) in a forked child; return its exit status, or write the
    partial report and return 3 when it died."""
    fd, path = tempfile.mkstemp(prefix="dtc-journal-", suffix=".jsonl")
    os.close(fd)
    t0 = time.perf_counter()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:                                    # the child runs the suite
        code = CRASH
        try:
            faulthandler.enable(file=sys.stderr, all_threads=False)
            code = body(Journal(path))
        except BaseException:                       # noqa: BLE001 (reported by the parent)
            traceback.print_exc()
            code = 70
        finally:
            try:        # what a normal exit runs: backends stop their workers (atexit)
                atexit._run_exitfuncs()
            except BaseException:                   # noqa: BLE001
                traceback.print_exc()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code if code in (0, 1, 2) else 70)
    try:
        _, status = os.waitpid(pid, 0)
    except KeyboardInterrupt:
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    try:
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) in (0, 1, 2):
            return os.WEXITSTATUS(status)
        return _report_crash(args, _read(path), _how(status), time.perf_counter() - t0)
    finally:
        os.unlink(path)


def _report_crash(args, state, how, seconds):
    from .cli import finish, partial_reasons
    from .xfails import PatternList
    results = state["results"]
    cell = state["cell"] or {}
    where = state["start"] or "(before the first cell)"
    sample = state["sample"]
    msg = (f"the run died ({how}) in {where}" + (f", sample {sample}" if sample else "") +
           "; its traceback is on stderr (faulthandler). Rerun with --isolate to go on past it")
    print(f"dispatchtorch-conformance: {msg}", file=sys.stderr)
    if cell:
        results.append(Result(cell["case"], cell["op"], cell["dtype"], "-", "-", "crash", msg))
    begin = state["begin"] or {"backend": {"name": args.backend}, "reference": {}}
    xfails = PatternList.load(args.xfails) if args.xfails else None
    finish(args, begin["backend"], begin["reference"], results, seconds, xfails,
           partial_reasons(args) + ["crashed"], crashed=where)
    return CRASH
