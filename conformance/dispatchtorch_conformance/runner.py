"""Running cases: every sample of a case, for one dtype, on the reference and on the
backend under test, with one Result per check."""
from __future__ import annotations

import fnmatch
import time
import warnings

import dispatchtorch  # noqa: F401  (registers every op of the reference set)
from dispatchtorch.backend import FLOATING
from dispatchtorch.dispatch import OPS, get_backend, set_fallback_mode
from dispatchtorch.dispatch.registry import FRONTEND_KINDS

from . import execute
from .case import Arr, Gen, seed_of
from .checks import check_alias, check_forward, check_grad, check_inplace, describe_exc
from .results import Result

REFERENCE = "cpu"


class SetupError(RuntimeError):
    """The backend under test cannot be used (not installed, failed, no device)."""


class Target:
    """The backend under test, one of its devices, and the reference."""

    def __init__(self, backend="cpu", device=0, strict=False):
        try:
            self.rt = get_backend(backend)
        except RuntimeError as exc:
            raise SetupError(str(exc)) from None
        if self.rt.status != "ready":
            raise SetupError(f"backend '{backend}' is {self.rt.status}: {self.rt.error}")
        if not 0 <= device < len(self.rt.devices):
            raise SetupError(f"backend '{backend}' has {len(self.rt.devices)} device(s); "
                             f"there is no device {device}")
        self.name, self.index = backend, device
        self.device = "cpu" if backend == REFERENCE else f"{backend}:{device}"
        self.info = self.rt.devices[device]
        self.dtypes = frozenset(self.info.dtypes)
        self.reference = get_backend(REFERENCE)
        self.fallbacks_seen: set = set()
        if strict:
            set_fallback_mode("error")

    def describe(self):
        d = self.rt.as_dict()
        d["device_under_test"] = self.device
        # prims of the catalogue that no registered op uses yet cannot fall back
        d["missing_prims"] = [p for p in d["missing_prims"] if p in OPS]
        return d

    # -- fallback and decomposition tracking ----------------------------------------
    def start_tracking(self):
        """Forget the resolved kernels, so that a prim falling back to the CPU is
        recorded again on its first use by the next sample."""
        for op in OPS.values():
            op.kernels.pop(self.name, None)
        self.rt.fallbacks.clear()

    def stop_tracking(self):
        used = sorted(self.rt.fallbacks)
        self.fallbacks_seen.update(used)
        return used

    def decomposes(self, op_name):
        op = OPS.get(op_name)
        return bool(op is not None and not op.prim and op.kind not in FRONTEND_KINDS
                    and op_name not in self.rt.kernels)


def select(cases, ops=None, exclude=None):
    """Cases whose op or name matches one of the patterns (fnmatch) in ops."""
    def hit(case, patterns):
        return any(fnmatch.fnmatchcase(case.op, p) or fnmatch.fnmatchcase(case.name, p)
                   for p in patterns)
    out = [c for c in cases if not ops or hit(c, ops)]
    return [c for c in out if not exclude or not hit(c, exclude)]


def cell_dtypes(case, dtypes=None):
    names = case.resolved_dtypes(OPS.get(case.op))
    return [d for d in names if dtypes is None or d in dtypes]


def _res(case, dtype, sample, check, outcome, message="", **kw):
    return Result(case.name, case.op, dtype, sample, check, outcome, message, **kw)


def run_cell(target, case, dtype, only_sample=None, checks=None, keep_runs=None, skips=None):
    """Every check of every sample of `case` for `dtype`. keep_runs, a list, receives
    (sample, check, reference run, backend run) for a verbose reproduction; skips, a
    PatternList, names cells and samples not to run (a hang, a crash)."""
    opdef = OPS.get(case.op)
    if opdef is None:
        return [_res(case, dtype, "-", "-", "error",
                     f"the case names op '{case.op}', which is not in dispatchtorch's OPS")]
    if dtype not in target.dtypes:
        return [_res(case, dtype, "-", "-", "skip",
                     f"device {target.device} does not claim dtype {dtype}")]
    if dtype in case.skip:
        return [_res(case, dtype, "-", "-", "skip", case.skip[dtype])]
    entry = skips.match(f"{case.name}/{dtype}") if skips is not None else None
    if entry is not None:
        return [_res(case, dtype, "-", "-", "skip", _skip_reason(skips, entry))]
    try:
        samples = list(case.samples(Gen(case.name, dtype)))
    except Exception as exc:        # noqa: BLE001
        return [_res(case, dtype, "-", "-", "error",
                     f"the sample generator raised {describe_exc(exc)}")]
    names = [s.name for s in samples]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        return [_res(case, dtype, "-", "-", "error", f"duplicate sample names: {dup}")]
    decomposed = target.decomposes(case.op)
    grad = case.checks_grad(opdef)
    results = []
    for sample in samples:
        if only_sample is not None and sample.name != only_sample:
            continue
        entry = skips.match(f"{case.name}/{dtype}/{sample.name}") if skips is not None else None
        if entry is not None:
            results.append(_res(case, dtype, sample.name, "-", "skip", _skip_reason(skips, entry)))
            continue
        unclaimed = sorted(({a.dtype for a in sample.arrays()} | sample.needs) - target.dtypes)
        if unclaimed:
            results.append(_res(case, dtype, sample.name, "-", "skip",
                                f"uses dtypes the device does not claim: {', '.join(unclaimed)}"))
            continue
        results.extend(_run_sample(target, case, dtype, sample, grad, decomposed, checks,
                                   keep_runs))
    return results


def _run_sample(target, case, dtype, sample, grad, decomposed, checks, keep_runs):
    tols = (case.tol, sample.tol)
    expect = target.device if case.out_device == "input" else "cpu"
    base_id = f"{case.name}/{dtype}/{sample.name}"
    wanted = [c for c in ("forward", "grad", "inplace", "alias")
              if (checks is None or c in checks) and c not in sample.skipped]
    out = []
    t0 = time.perf_counter()
    target.start_tracking()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)    # IEEE results of extremes, fallbacks
        ref = execute.forward(case, sample, REFERENCE)
        tgt = execute.forward(case, sample, target.device)
        unclaimed = _unclaimed_results(ref, tgt, target)
        if unclaimed:
            target.stop_tracking()
            return [_res(case, dtype, sample.name, "-", "skip",
                         f"the result has dtype {unclaimed}, which the device does not claim")]
        runs = [("forward", ref, tgt, check_forward(ref, tgt, sample, tols, expect))]
        if ref.exc is None and tgt.exc is None and sample.error is None:
            if "grad" in wanted and grad and dtype_has_grad(sample):
                seed = seed_of(base_id + "/grad")
                r, t = execute.gradient(case, sample, REFERENCE, seed), \
                    execute.gradient(case, sample, target.device, seed)
                if r.outputs or r.exc is not None or t.outputs or t.exc is not None:
                    runs.append(("grad", r, t, check_grad(r, t, tols)))
            if "inplace" in wanted and case.inplace is not None and _inplace_ok(sample):
                r, t = execute.inplace(case, sample, REFERENCE), \
                    execute.inplace(case, sample, target.device)
                runs.append(("inplace", r, t, check_inplace(r, t, tols, expect)))
            if "alias" in wanted and case.alias:
                r, t = execute.alias(case, sample, REFERENCE), \
                    execute.alias(case, sample, target.device)
                v = check_alias(r, t, tols)
                if v is not None:
                    runs.append(("alias", r, t, v))
    fallback = target.stop_tracking()
    seconds = time.perf_counter() - t0
    for check, r, t, v in runs:
        if check not in wanted:
            continue
        if keep_runs is not None:
            keep_runs.append((sample, check, r, t))
        out.append(_res(case, dtype, sample.name, check, v.outcome, v.message,
                        max_abs=v.max_abs, max_rel=v.max_rel, rtol=v.rtol, atol=v.atol,
                        fallback=fallback, decomposed=decomposed,
                        seconds=round(seconds / len(runs), 6)))
    return out


def _unclaimed_results(ref, tgt, target):
    """The dtype of a reference output the device does not claim, when the backend
    refused to make it (a device without float16 cannot hold a float16 result)."""
    if tgt.exc is None or ref.exc is not None:
        return None
    for _, v in ref.outputs:
        if isinstance(v, execute.HostTensor) and v.dtype not in target.dtypes:
            return v.dtype
    return None


def _skip_reason(skips, entry):
    return f"listed in {skips.path or 'skips'}:{entry.line}" + (f": {entry.reason}" if entry.reason else "")


def dtype_has_grad(sample):
    return any(a.grad and a.dtype in FLOATING for a in sample.arrays())


def _inplace_ok(sample):
    """An in-place write into an expanded (self-overlapping) tensor is undefined."""
    first = sample.args[0] if sample.args else None
    return isinstance(first, Arr) and first.layout != "expand"


def run(target, cases, dtypes=None, on_result=None, on_cell=None, skips=None):
    """Run every (case, dtype) cell; returns all Results."""
    results = []
    for case in cases:
        for dtype in cell_dtypes(case, dtypes):
            cell = run_cell(target, case, dtype, skips=skips)
            for r in cell:
                if on_result:
                    on_result(r)
            results.extend(cell)
            if on_cell:
                on_cell(case, dtype, cell)
    return results
