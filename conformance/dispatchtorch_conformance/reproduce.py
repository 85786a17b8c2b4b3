"""`--case ID`: rerun one case id verbosely, the way a vendor debugs a failure."""
from __future__ import annotations

import numpy as np

from .cases import by_name
from .execute import HostTensor
from .results import FAILING
from .runner import run_cell


def _show(value, indent="    "):
    if isinstance(value, HostTensor):
        head = f"{value.dtype}{list(value.shape)} on {value.device}"
        v = value.values
        if v.dtype.kind not in "biuf":
            v = v.astype(np.float64)
        body = np.array2string(v, threshold=60, edgeitems=3, max_line_width=100)
        return head + "\n" + "\n".join(indent + line for line in body.splitlines())
    return repr(value)


def reproduce(target, case_id):
    parts = case_id.strip("/").split("/")
    cases = by_name()
    if parts[0] not in cases:
        print(f"no case named {parts[0]!r}; `dispatchtorch-conformance --list` shows them")
        return 2
    if len(parts) < 2:
        print("give at least case/dtype, e.g. add/float32 or add/float32/bcast")
        return 2
    case, dtype = cases[parts[0]], parts[1]
    sample = parts[2] if len(parts) > 2 else None
    checks = {parts[3]} if len(parts) > 3 else None
    runs = []
    results = run_cell(target, case, dtype, only_sample=sample, checks=checks, keep_runs=runs)
    if not results:
        print(f"case {case.name} has no sample {sample!r} for {dtype}")
        return 2
    from .case import Gen
    samples = {s.name: s for s in case.samples(Gen(case.name, dtype))}
    shown = set()
    for s, check, ref, tgt in runs:
        if s.name not in shown:
            shown.add(s.name)
            print(f"== {case.name}/{dtype}/{s.name}: {case.op}{samples[s.name].describe()}")
            for i, a in enumerate(s.arrays()):
                print(f"  input {i} ({a.layout}): " + _show(HostTensor(a.dtype, a.shape, "host",
                                                                       a.values)))
        print(f"  -- {check}")
        for label, run in (("reference (cpu)", ref), (f"backend ({target.device})", tgt)):
            if run.exc is not None:
                print(f"  {label} raised during {run.where}: {type(run.exc).__name__}: {run.exc}")
                continue
            for path, v in run.outputs:
                print(f"  {label} {path}: " + _show(v))
    for r in results:
        extra = f" (max abs {r.max_abs:.3g}, max rel {r.max_rel:.3g})" if r.max_abs is not None else ""
        print(f"{r.outcome.upper():8} {r.id}{extra} {r.message}")
    return 1 if any(r.outcome in FAILING for r in results) else 0
