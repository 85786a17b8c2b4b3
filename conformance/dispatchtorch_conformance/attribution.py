"""Prim attribution: which prims ran on the device during each check, and which failing
prims explain a failing composite or gradient ("fails because `sum` (float16) fails").

The recorder is installed with `dispatchtorch.dispatch.record_kernels` only while a
sample runs; outside the suite resolution returns bare kernels (no per-call cost).
"""
from __future__ import annotations

from dispatchtorch.backend.prims import PRIMS
from dispatchtorch.dispatch import OPS, record_kernels

N_PRIMS = len(PRIMS)
OWN_CHECKS = ("forward", "inplace", "alias")   # a prim's own verdicts (its grads use others)


def _dtype_of(handles, n_out):
    """The dtype a prim computed in: its output's, unless that is bool or int64 (a
    comparison, an argmax, nonzero) and an input is not; then its first non-bool
    input's. Handles are backend-native: numpy, cupy and the OpenCL backend's arrays
    all carry a `dtype` whose str is the name."""
    names = [str(getattr(h, "dtype", "?")) for h in handles]
    out = names[0] if names else "?"
    if out not in ("bool", "int64"):
        return out
    ins = [d for d in names[n_out:] if d not in ("bool", "?")]
    return ins[0] if ins else out


class PrimRecorder:
    """Collects (prim, dtype) of the kernels the backend under test runs itself, and
    the prims that ran on the CPU in its place."""

    def __init__(self, backend_name):
        self.name = backend_name
        self.on_device: set = set()
        self.fell_back: set = set()

    def __call__(self, rt_name, op_name, handles, on_device):
        if rt_name != self.name or op_name not in PRIMS:
            return
        op = OPS.get(op_name)
        key = f"{op_name}/{_dtype_of(handles, op.n_out if op else 1)}"
        (self.on_device if on_device else self.fell_back).add(key)

    def start(self):
        self.on_device, self.fell_back = set(), set()
        record_kernels(self)

    def take(self):
        """The prims recorded since the last take, sorted, and forget them."""
        out = sorted(self.on_device)
        self.on_device = set()
        return out

    @staticmethod
    def stop():
        record_kernels(None)


def prim_name(key):
    return key.partition("/")[0]


def failing_prims(results):
    """{"sum/float16", ...}: prims whose own cases failed in that dtype."""
    return {f"{r.op}/{r.dtype}" for r in results
            if r.failed and r.op in PRIMS and r.check in OWN_CHECKS}


def attribute(results):
    """Fill `r.blame` on every failing result that ran a prim whose own case fails in
    the dtype it ran in (other than the result's own prim and dtype)."""
    bad = failing_prims(results)
    if not bad:
        return
    for r in results:
        if not r.failed or not r.prims:
            continue
        own = f"{r.op}/{r.dtype}" if r.check in OWN_CHECKS else None
        r.blame = [p for p in r.prims if p in bad and p != own]


def describe_blame(blame):
    """'fails because `sum` (float16) fails' for ['sum/float16']."""
    parts = [f"`{p.partition('/')[0]}` ({p.partition('/')[2]})" for p in blame]
    return "fails because " + ", ".join(parts) + (" fail" if len(parts) > 1 else " fails")


def prim_coverage(results):
    """{'on_device': sorted prim names that ran on the device, 'fell_back': sorted prim
    names that ran on the CPU instead}, over every result."""
    on, fb = set(), set()
    for r in results:
        on.update(prim_name(p) for p in r.prims)
        fb.update(r.fallback)
    return {"on_device": sorted(on - fb), "fell_back": sorted(fb), "total": N_PRIMS}
