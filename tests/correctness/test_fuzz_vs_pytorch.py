"""Property-based fuzzing next to PyTorch: public ops and Tensor methods called with
random valid and invalid arguments (hypothesis, seeded and bounded).

A case fails when dispatchtorch returns where PyTorch raises (or raises where it
returns), gives another value, shape or dtype, raises another exception class or a
message that does not name the op, or changes an input (values or version) in a call
that raised. Every case is run and counted by category; the test then asserts that no
case fell into a failing one. Set DISPATCHTORCH_FUZZ_CASES to run more (or fewer).
"""
from __future__ import annotations

import collections
import contextlib
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dispatchtorch
from fuzz_ops import OPS, Ten, tensors

torch = pytest.importorskip("torch")

PASS = ("same value", "same exception")
FAIL = ("returned where PyTorch raised", "raised where PyTorch returned", "different value",
        "different dtype or shape", "different exception class", "message without the op",
        "input changed by a call that raised")


def _build(T, device, a):
    if isinstance(a, tuple):
        return tuple(_build(T, device, v) for v in a)
    return a.make(T, device) if isinstance(a, Ten) else a


def _call(T, device, name, x, args, kwargs):
    """Run the op; returns (result, the tensors it was given)."""
    form = OPS[name][0]
    xt = x.make(T, device)
    targs = [_build(T, device, a) for a in args]
    tkw = {k: _build(T, device, v) for k, v in kwargs.items() if k != "others"}
    others = [_build(T, device, o) for o in kwargs.get("others", ())]
    flat = [v for a in targs + list(tkw.values()) + others
            for v in (a if isinstance(a, tuple) else (a,))]
    given_tensors = [xt] + [a for a in flat if isinstance(a, T.Tensor)]
    holder = {"inputs": given_tensors}

    def run():
        if form == "method":
            if name == "masked_select":
                return xt.masked_select(targs[0])
            return getattr(xt, name)(*targs, **tkw)
        if form == "function":
            return getattr(T, name)(xt, *targs, **tkw)
        if form == "where":
            cond, other = targs
            return T.where(cond, xt, other)
        if form in ("cat", "stack"):
            return getattr(T, form)([xt] + others, *targs)
        if form == "addmm":
            return T.addmm(xt, *targs)
        raise AssertionError(form)
    return run, holder


def _norm(T, r):
    """A result as comparable plain data."""
    if isinstance(r, T.Tensor):
        dt = str(r.dtype).split(".")[-1]
        r = r.detach().cpu()
        return ("tensor", dt, tuple(r.shape),
                np.asarray(r.double().tolist() if r.dtype.is_floating_point else r.tolist()))
    if isinstance(r, (tuple, list)):
        return ("seq", tuple(_norm(T, v) for v in r))
    return ("value", r)


def _same(a, b):
    if a[0] != b[0]:
        return "different value"
    if a[0] == "tensor":
        if a[1:3] != b[1:3]:
            return "different dtype or shape"
        x, y = a[3], b[3]
        if x.dtype.kind == "f" or y.dtype.kind == "f":
            ok = np.allclose(x.astype(float), y.astype(float), rtol=1e-5, atol=1e-5,
                             equal_nan=True)
        else:
            ok = np.array_equal(x, y)
        return None if ok else "different value"
    if a[0] == "seq":
        if len(a[1]) != len(b[1]):
            return "different value"
        for u, v in zip(a[1], b[1]):
            bad = _same(u, v)
            if bad:
                return bad
        return None
    same = a[1] == b[1] or (isinstance(a[1], float) and isinstance(b[1], float)
                            and np.isnan(a[1]) and np.isnan(b[1]))
    return None if same else "different value"


def _snapshot(T, ts):
    return [(t.detach().cpu().double().tolist() if t.dtype.is_floating_point else
             t.detach().cpu().tolist(), t._version) for t in ts]


def run_case(name, x, args, kwargs, device="cpu"):
    """(category, detail) of one case."""
    inplace = "inplace" in OPS[name][3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs_run, theirs_in = _call(torch, "cpu", name, x, args, kwargs)
        try:
            t = theirs_run()
            theirs = ("returned", _norm(torch, t), _norm(torch, theirs_in["inputs"][0]))
        except Exception as exc:
            theirs = ("raised", type(exc).__name__, str(exc).split("\n")[0])
        ours_run, ours_in = _call(dispatchtorch, device, name, x, args, kwargs)
        before = _snapshot(dispatchtorch, ours_in["inputs"])
        try:
            o = ours_run()
            ours = ("returned", _norm(dispatchtorch, o), _norm(dispatchtorch, ours_in["inputs"][0]))
        except Exception as exc:
            ours = ("raised", type(exc).__name__, str(exc))
            if _snapshot(dispatchtorch, ours_in["inputs"]) != before:
                return "input changed by a call that raised", (ours, theirs)
    if ours[0] != theirs[0]:
        return ("returned where PyTorch raised" if ours[0] == "returned"
                else "raised where PyTorch returned"), (ours, theirs)
    if ours[0] == "raised":
        if ours[1] != theirs[1]:
            return "different exception class", (ours, theirs)
        if name.rstrip("_") not in ours[2]:
            return "message without the op", (ours, theirs)
        return "same exception", None
    bad = _same(ours[1], theirs[1]) or (inplace and _same(ours[2], theirs[2]))
    return (bad, (ours, theirs)) if bad else ("same value", None)


@contextlib.contextmanager
def _same_cases_in_every_process():
    """Hypothesis mixes literals harvested from every loaded module of this repository
    into 5% of its draws, so the cases would depend on which modules earlier tests in the
    same process had imported (the cuda backend, say). Without those, seeded generation
    gives the same cases everywhere. (Its internals: skipped if they move.)"""
    try:
        from hypothesis.internal.conjecture import providers as P
        empty = P.Constants(integers=P.SortedSet(), floats=P.SortedSet(key=P.float_to_int),
                            bytes=P.SortedSet(), strings=P.SortedSet())
        harvest, cache, fresh = P._get_local_constants, P.CONSTANTS_CACHE, P.LRUCache(1024)
    except (ImportError, AttributeError, TypeError):
        yield
        return
    P._get_local_constants, P.CONSTANTS_CACHE = (lambda: empty), fresh
    try:
        yield
    finally:
        P._get_local_constants, P.CONSTANTS_CACHE = harvest, cache


def fuzz(n_cases, device="cpu", seed=0):
    """Run n_cases; returns (counts by category, failing examples by category)."""
    counts = collections.Counter()
    failures = collections.defaultdict(list)
    by_op = collections.Counter()
    names = sorted(OPS)

    @st.composite
    def case(draw):
        name = draw(st.sampled_from(names))
        form, args_of, dtypes, flags = OPS[name]
        x = draw(tensors(dtypes=dtypes, unique="unique" in flags))
        args, kwargs = draw(args_of(x))
        return name, x, args, kwargs

    @settings(max_examples=n_cases, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck), phases=("generate",))
    @given(case())
    def each(c):
        name, x, args, kwargs = c
        category, detail = run_case(name, x, args, kwargs, device)
        counts[category] += 1
        by_op[(category, name)] += 1
        if category in FAIL and len(failures[(category, name)]) < 3:
            failures[(category, name)].append((x, args, {k: v for k, v in kwargs.items()},
                                               detail))
    with _same_cases_in_every_process():
        each()
    failures["by_op"] = by_op
    return counts, failures


def _report(counts, failures):
    lines = [f"{k}: {v}" for k, v in sorted(counts.items())]
    by_op = failures.get("by_op", {})
    for (category, name), examples in sorted((k, v) for k, v in failures.items() if k != "by_op"):
        x, args, kwargs, detail = examples[0]
        lines.append(f"  [{by_op.get((category, name), 0)}] {category} | {name}({x}, {args}, {kwargs}) -> ours {detail[0]!r:.200} "
                     f"| PyTorch {detail[1]!r:.200}")
    return "\n".join(lines)


CPU_CASES = int(os.environ.get("DISPATCHTORCH_FUZZ_CASES", "2000"))


def test_fuzz_cpu_matches_pytorch():
    counts, failures = fuzz(CPU_CASES)
    print("\n" + _report(counts, failures))
    assert sum(counts.values()) >= CPU_CASES
    assert not any(counts[c] for c in FAIL), _report(counts, failures)


OPENCL_CASES = int(os.environ.get("DISPATCHTORCH_FUZZ_OPENCL_CASES", "500"))


def test_fuzz_opencl_matches_pytorch():
    """The same cases on OpenCL (PoCL on a plain CPU in CI); skipped without a device."""
    from dispatchtorch.dispatch import loader
    try:
        rt = loader.get_backend("opencl")
    except RuntimeError as exc:
        pytest.skip(str(exc))
    if rt.status != "ready":
        pytest.skip(f"opencl backend {rt.status}: {rt.error}")
    counts, failures = fuzz(OPENCL_CASES, device="opencl")
    print("\n" + _report(counts, failures))
    assert sum(counts.values()) >= OPENCL_CASES
    assert not any(counts[c] for c in FAIL), _report(counts, failures)
