"""Running cases: every sample of a case, for one dtype, on the reference and on the
backend under test, with one Result per check."""
from __future__ import annotations

import fnmatch
import time
import warnings

import dispatchtorch  # noqa: F401  (registers every op of the reference set)
from dispatchtorch.backend import FLOATING
from dispatchtorch.backend.prims import PRIMS
from dispatchtorch.dispatch import OPS, get_backend, set_fallback_mode
from dispatchtorch.dispatch.registry import FRONTEND_KINDS

from . import execute
from .attribution import PrimRecorder
from .case import Arr, Gen, seed_of
from .budgets import budget_for
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
        if backend == "meta":
            raise SetupError("the meta backend has no values: its tensors have shapes and "
                             "dtypes but no data, so there is nothing to compare with the "
                             "reference")
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
        self.recorder = PrimRecorder(backend)
        if strict:
            set_fallback_mode("error")

    def describe(self):
        d = self.rt.as_dict()
        d["device_under_test"] = self.device
        # prims of the catalogue that no registered op uses yet cannot fall back
        d["missing_prims"] = [p for p in d["missing_prims"] if p in OPS]
        return d

    # -- fallback, prim and decomposition tracking -----------------------------------
    def start_tracking(self):
        """Record the prims each check runs (re-resolving every kernel, so that a prim
        falling back to the CPU is also recorded again on its first use)."""
        self.rt.fallbacks.clear()
        self.recorder.start()

    def stop_tracking(self):
        self.recorder.stop()
        used = sorted(self.rt.fallbacks)
        self.fallbacks_seen.update(used)
        return used

    def decomposes(self, op_name):
        op = OPS.get(op_name)
        return bool(op is not None and not op.prim and op.kind not in FRONTEND_KINDS
                    and op_name not in self.rt.kernels)


def _hits(cases, pattern):
    """The cases a name or pattern selects: a plain name is a case name exactly (`sum`
    runs sum, not mean, whose op is sum too), or, when no case has that name, every
    case of the op of that name (`matmul`'s variants mm and bmm); a pattern with
    `*?[` matches case and op names with fnmatch."""
    if any(ch in pattern for ch in "*?["):
        return {c.name for c in cases if fnmatch.fnmatchcase(c.name, pattern)
                or fnmatch.fnmatchcase(c.op, pattern)}
    named = {c.name for c in cases if c.name == pattern}
    return named or {c.name for c in cases if c.op == pattern}


def select(cases, ops=None, exclude=None, prims=None):
    """The cases named by ops (names or patterns), less those named by exclude; with
    prims (a list of prim names, or ["*"]), only the prims' own cases. The prims'
    own cases always come first, so that a composite's failure can be explained by
    the prims it ran."""
    keep = set().union(*(_hits(cases, p) for p in ops)) if ops else {c.name for c in cases}
    if exclude:
        keep -= set().union(*(_hits(cases, p) for p in exclude))
    out = [c for c in cases if c.name in keep]
    if prims:
        out = [c for c in out if c.op in PRIMS and any(fnmatch.fnmatchcase(c.op, p)
                                                        for p in prims)]
    return sorted(out, key=lambda c: c.op not in PRIMS)


def unmatched(cases, ops):
    """The names or patterns of ops that select nothing."""
    return [p for p in ops or () if not _hits(cases, p)]


def cell_dtypes(case, dtypes=None):
    names = case.resolved_dtypes(OPS.get(case.op))
    return [d for d in names if dtypes is None or d in dtypes]


def _res(case, dtype, sample, check, outcome, message="", **kw):
    return Result(case.name, case.op, dtype, sample, check, outcome, message, **kw)


def run_cell(target, case, dtype, only_sample=None, checks=None, keep_runs=None, skips=None,
             on_sample=None):
    """Every check of every sample of `case` for `dtype`. keep_runs, a list, receives
    (sample, check, reference run, backend run) for a verbose reproduction; skips, a
    PatternList, names cells and samples not to run (a hang, a crash); on_sample(id) is
    called before each sample runs (crash and hang reports name it)."""
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
        if on_sample is not None:
            on_sample(f"{case.name}/{dtype}/{sample.name}")
        results.extend(_run_sample(target, case, dtype, sample, grad, decomposed, checks,
                                   keep_runs))
    return results


class _Timed:
    """Runs the reference and the backend for one check; keeps the device's prims and
    both times."""

    def __init__(self, target):
        self.target, self.ref_s, self.tgt_s = target, 0.0, 0.0

    def pair(self, fn, *args):
        t0 = time.perf_counter()
        ref = fn(*args, REFERENCE)
        t1 = time.perf_counter()
        self.target.recorder.take()
        tgt = fn(*args, self.target.device)
        self.prims = self.target.recorder.take()
        self.ref_s += t1 - t0
        self.tgt_s += time.perf_counter() - t1
        return ref, tgt


def _with_seed(fn, seed):
    return lambda case, sample, device: fn(case, sample, device, seed)


def _run_sample(target, case, dtype, sample, grad, decomposed, checks, keep_runs):
    tols = (case.tol, sample.tol)
    ulps = budget_for(case, sample)
    expect = target.device if case.out_device == "input" else "cpu"
    base_id = f"{case.name}/{dtype}/{sample.name}"
    wanted = [c for c in ("forward", "grad", "inplace", "alias")
              if (checks is None or c in checks) and c not in sample.skipped]
    out = []
    timed = _Timed(target)
    target.start_tracking()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # IEEE results of extremes, fallbacks
            ref, tgt = timed.pair(execute.forward, case, sample)
            unclaimed = _unclaimed_results(ref, tgt, target)
            if unclaimed:
                return [_res(case, dtype, sample.name, "-", "skip",
                             f"the result has dtype {unclaimed}, which the device does not claim")]
            runs = [("forward", ref, tgt, check_forward(ref, tgt, sample, tols, expect, ulps),
                     timed.prims)]
            if ref.exc is None and tgt.exc is None and sample.error is None:
                if "grad" in wanted and grad and dtype_has_grad(sample):
                    seed = seed_of(base_id + "/grad")
                    r, t = timed.pair(_with_seed(execute.gradient, seed), case, sample)
                    if r.outputs or r.exc is not None or t.outputs or t.exc is not None:
                        runs.append(("grad", r, t, check_grad(r, t, tols), timed.prims))
                if "inplace" in wanted and case.inplace is not None and _inplace_ok(sample):
                    r, t = timed.pair(execute.inplace, case, sample)
                    runs.append(("inplace", r, t, check_inplace(r, t, tols, expect, ulps),
                                 timed.prims))
                if "alias" in wanted and case.alias:
                    for direction in execute.ALIAS_DIRECTIONS:
                        r, t = timed.pair(execute.alias_fn(direction), case, sample)
                        v = check_alias(r, t, tols)
                        if v is not None:
                            if v.outcome != "pass":
                                v.message = f"{direction}: {v.message}"
                            runs.append(("alias", r, t, v, timed.prims))
                        if v is None or v.outcome != "pass":
                            break
    finally:
        fallback = target.stop_tracking()
    runs = _merge_alias(runs)
    n = len(runs)
    for check, r, t, v, prims in runs:
        if check not in wanted:
            continue
        if keep_runs is not None:
            keep_runs.append((sample, check, r, t))
        out.append(_res(case, dtype, sample.name, check, v.outcome, v.message,
                        max_abs=v.max_abs, max_rel=v.max_rel, rtol=v.rtol, atol=v.atol,
                        max_ulp=v.max_ulp, ulp_budget=v.ulp_budget,
                        fallback=fallback, decomposed=decomposed, prims=prims,
                        seconds=round(timed.tgt_s / n, 6), ref_seconds=round(timed.ref_s / n, 6)))
    return out


def _merge_alias(runs):
    """The alias checks of both directions are one verdict: the first failure, or the
    last pass (with the prims of both)."""
    alias = [x for x in runs if x[0] == "alias"]
    if len(alias) < 2:
        return runs
    keep = next((x for x in alias if x[3].outcome != "pass"), alias[-1])
    prims = sorted({p for x in alias for p in x[4]})
    return [x for x in runs if x[0] != "alias"] + [keep[:4] + (prims,)]


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


def run(target, cases, dtypes=None, on_result=None, on_cell=None, skips=None, on_sample=None,
        on_start=None):
    """Run every (case, dtype) cell; returns all Results. on_start(case, dtype) is
    called before each cell."""
    results = []
    for case in cases:
        for dtype in cell_dtypes(case, dtypes):
            if on_start is not None:
                on_start(case, dtype)
            cell = run_cell(target, case, dtype, skips=skips, on_sample=on_sample)
            for r in cell:
                if on_result:
                    on_result(r)
            results.extend(cell)
            if on_cell:
                on_cell(case, dtype, cell)
    return results
