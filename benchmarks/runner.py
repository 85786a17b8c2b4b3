"""Runs each case on every framework side by side and computes the ratios.

For one case every framework is built, checked and calibrated first; then the
repeats are interleaved (numpy, torch, ours:cpu, ... in a rotating order), so a
burst of load from other processes on this shared machine hits all of them alike
rather than one framework's whole run.
"""
from __future__ import annotations

import statistics
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

from . import timer
from .cases import Case


@dataclass
class Settings:
    repeats: int = 7              # timed batches per framework (at most)
    min_repeats: int = 3          # at least, even when a case is slow
    min_batch_s: float = 0.1      # each timed batch lasts at least this
    case_budget_s: float = 40.0   # wall time all frameworks' repeats of one case may take
    warmup_s: float = 0.05
    quick: bool = False

    @classmethod
    def quick_mode(cls):
        return cls(repeats=3, min_repeats=2, min_batch_s=0.005, case_budget_s=2.0,
                   warmup_s=0.0, quick=True)


@dataclass
class Entry:
    """One framework's part of a case."""

    label: str
    kind: str
    status: str = "ok"            # ok | skipped | error | wrong
    reason: str = ""
    timing: timer.Timing | None = None
    setup_s: float = 0.0          # build, first call, check and warm-up
    fn: object = None
    fw: object = None

    def as_dict(self):
        d = {"label": self.label, "framework": self.kind, "status": self.status,
             "reason": self.reason, "setup_s": self.setup_s}
        if self.timing is not None:
            d["timing"] = self.timing.as_dict()
        return d


@dataclass
class Result:
    case: Case
    size: object
    entries: dict = field(default_factory=dict)     # label -> Entry
    threads: str = "default"                        # the thread setting (threads.py)

    def median(self, label):
        e = self._ok(label)
        return e.timing.median if e is not None else None

    def ratio(self, ours, ref):
        """ours / ref: the median over rounds of the two batches timed in the same round,
        so that load from other processes drifting between rounds cancels out."""
        a, b = self._ok(ours), self._ok(ref)
        if a is None or b is None:
            return None
        return statistics.median(x / y for x, y in zip(a.timing.samples, b.timing.samples))

    def ratio_of_medians(self, ours, ref):
        a, b = self.median(ours), self.median(ref)
        return a / b if a is not None and b is not None else None

    def _ok(self, label):
        e = self.entries.get(label)
        return e if e is not None and e.status == "ok" and e.timing and e.timing.samples else None

    def as_dict(self, ours_labels):
        c = self.case
        ratios = {}
        for o in ours_labels:
            ratios[o] = {"numpy": self.ratio(o, "numpy"), "torch": self.ratio(o, "torch"),
                         "numpy_ratio_of_medians": self.ratio_of_medians(o, "numpy"),
                         "torch_ratio_of_medians": self.ratio_of_medians(o, "torch")}
            t = target_for(c, o)
            if t is not None:
                r = ratios[o][t.ref]
                ratios[o]["target"] = {"ref": t.ref, "max_ratio": t.max_ratio, "text": t.text,
                                       "met": None if r is None else r <= t.max_ratio}
        return {"name": c.name, "description": c.description, "size": _jsonable(self.size),
                "threads": self.threads,
                "entries": {k: e.as_dict() for k, e in self.entries.items()},
                "ratios": ratios}


def target_for(case, label):
    """The issue's target for our device `label` ('ours:opencl:0'), if any."""
    if not label.startswith("ours:"):
        return None
    return case.targets.get(label.split(":")[1])


def _jsonable(v):
    return list(v) if isinstance(v, tuple) else v


def _error_text(exc):
    return f"{type(exc).__name__}: {exc}".strip()


def prepare(case: Case, frameworks, size, settings: Settings, log) -> Result:
    """Build, run once, check and warm up the case on each framework."""
    result = Result(case, size)
    reference = ref_label = None
    for fw in frameworks:
        if fw.kind == "numpy" and not case.numpy:
            continue
        entry = result.entries[fw.label] = Entry(fw.label, fw.kind, fw=fw)
        if fw.kind != "numpy":
            missing = [n for n in case.needs if not fw.has(n)]
            if missing:
                entry.status = "skipped"
                entry.reason = f"{fw.kind} has no {', '.join(missing)} yet"
                continue
        t0 = time.perf_counter()
        try:
            fw.activate()
            entry.fn = case.build(fw, size)
            out = entry.fn()
            fw.sync()
            if case.compare:
                got = fw.to_numpy(out)
                if reference is None:
                    reference, ref_label = got, fw.label
                elif not _close(got, reference, case.rtol):
                    entry.status = "wrong"
                    entry.reason = f"result differs from {ref_label}'s: " + _diff(got, reference)
                    entry.fn = None
                    continue
            timer.warm_up(entry.fn, fw.sync, settings.warmup_s)
        except Exception as exc:          # a bug in a framework: report it, keep going
            _failed(entry, exc, log)
            continue
        entry.setup_s = time.perf_counter() - t0
    return result


def _failed(entry, exc, log):
    entry.status, entry.reason = "error", _error_text(exc)
    entry.fn, entry.timing = None, None
    log(f"  {entry.label}: {entry.reason}\n" + traceback.format_exc(limit=-3))


def _close(got, ref, rtol):
    got, ref = np.asarray(got), np.asarray(ref)
    if got.shape != ref.shape or got.dtype != ref.dtype:
        return False
    if ref.dtype.kind != "f":
        return bool(np.array_equal(got, ref))
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    return bool(np.allclose(got, ref, rtol=rtol, atol=rtol * scale))


def _diff(got, ref):
    got, ref = np.asarray(got), np.asarray(ref)
    if got.shape != ref.shape or got.dtype != ref.dtype:
        return f"shape/dtype {got.shape} {got.dtype} vs {ref.shape} {ref.dtype}"
    err = np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64))) if ref.size else 0.0
    return f"max abs error {err:.3g}"


def measure(result: Result, settings: Settings, log) -> None:
    """Calibrate each ready framework, then time interleaved repeats."""
    batch_s = 0.0
    for e in result.entries.values():
        if e.status != "ok":
            continue
        try:
            e.fw.activate()
            number, seconds = timer.calibrate(e.fn, e.fw.sync, settings.min_batch_s)
        except Exception as exc:
            _failed(e, exc, log)
            continue
        e.timing = timer.Timing(number)
        batch_s += seconds
    ready = [e for e in result.entries.values() if e.status == "ok"]
    fits = int(settings.case_budget_s / batch_s) if batch_s > 0 else settings.repeats
    repeats = max(settings.min_repeats, min(settings.repeats, fits))
    for r in range(repeats):
        shift = r % len(ready) if ready else 0
        for e in ready[shift:] + ready[:shift]:
            if e.status != "ok":
                continue
            timer.collect()
            try:
                e.fw.activate()
                e.timing.samples.append(timer.time_batch(e.fn, e.timing.number, e.fw.sync))
            except Exception as exc:
                _failed(e, exc, log)


def run_case(case, frameworks, settings: Settings, log=print) -> Result:
    size = case.size_for(settings.quick)
    t0 = time.perf_counter()
    result = prepare(case, frameworks, size, settings, log)
    measure(result, settings, log)
    for e in result.entries.values():
        e.fn = None                                   # free inputs and models now
    result.wall_s = time.perf_counter() - t0
    return result
