"""Dev tool: every differentiable op at special values against PyTorch, forward and backward.

Why: gradients at zeros, infinities, NaNs, ties and domain edges were found wrong by
hand one op at a time (relu's, clamp's, max_pool2d's); this sweeps them all. Each case
runs the same inputs through PyTorch (the answer) and dispatchtorch and backpropagates
incoming gradients that include inf, -inf, NaN and -0.0. Bits are compared where the
answer is exact (NaN positions, infinities, the sign of a zero), a tolerance elsewhere.

    python -m tools.special_values                       # float64 on cpu, the table
    python -m tools.special_values --device opencl --dtype float32 --ops relu,clamp
    python -m tools.special_values --create-graph        # the double-backward rules
    python -m tools.special_values -v                    # the first mismatching elements

Needs torch (dev only; the tests never import this). The cases: tools/special_cases.py.
"""
from __future__ import annotations

import argparse
import collections
import fnmatch
import sys
import warnings

import numpy as np

import dispatchtorch as dt
from tools.special_cases import CASES, GRADS

RTOL = {"float64": 1e-9, "float32": 2e-5}
ATOL = {"float64": 1e-12, "float32": 1e-6}


def _mismatch(want, got, dtype):
    """Indices (flat) where `got` differs from `want`, and a reason; [] when they agree."""
    want = np.asarray(want, dtype=np.float64)
    got = np.asarray(got, dtype=np.float64)
    if want.shape != got.shape:
        return [(0, "shape")]
    w, g = want.reshape(-1), got.reshape(-1)
    bad = np.isnan(w) != np.isnan(g)
    fin = ~np.isnan(w) & ~np.isnan(g)
    inf = fin & (np.isinf(w) | np.isinf(g))
    bad |= inf & (w != g)
    zero = fin & (w == 0) & (g == 0)
    bad |= zero & (np.signbit(w) != np.signbit(g))
    rest = fin & ~inf & ~zero
    off = rest & ~np.isclose(g, w, rtol=RTOL[dtype], atol=ATOL[dtype])
    bad |= off
    kinds = np.where(np.isnan(w) != np.isnan(g), "nan", np.where(
        inf & (w != g), "inf", np.where(off, "value", "sign")))
    out = [(int(i), str(kinds[i])) for i in np.flatnonzero(bad)]
    return sorted(out, key=lambda e: e[1] == "sign")     # the examples: worst first


def _to_np(x):
    if x is None:
        return None
    if hasattr(x, "detach"):
        x = x.detach()
    if hasattr(x, "cpu"):
        x = x.cpu()
    if hasattr(x, "is_floating_point") and not x.is_floating_point():
        return np.asarray(x.numpy())
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _outs(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


def _run(T, case, data, gvals, dtype, device, create_graph):
    """Forward, then the gradients of every input for incoming gradient values `gvals`
    (one per leading row, broadcast over the rest of each floating output)."""
    dty = getattr(T, dtype)
    args = []
    for i, a in enumerate(data):
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            t = T.tensor(a.tolist(), dtype=dty, device=device)
            args.append(t.requires_grad_(i in case.grad_args(len(data))))
        elif isinstance(a, np.ndarray):
            args.append(T.tensor(a.tolist(), dtype=getattr(T, case.int_dtype), device=device))
        else:
            args.append(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = _outs(case.fn(T, *args))
    leaves = [a for i, a in enumerate(args) if hasattr(a, "requires_grad") and a.requires_grad]
    fl = [o for o in out if hasattr(o, "is_floating_point") and o.is_floating_point()
          and o.requires_grad]
    grads = []
    if leaves and fl and gvals is not None:
        gs = []
        for o in fl:
            shape = [len(gvals)] + [1] * (o.dim() - 1) if case.batched and o.dim() else []
            gv = gvals if case.batched and o.dim() else gvals[:1]
            g = T.tensor(gv, dtype=o.dtype, device=device).reshape(shape).expand(o.shape)
            gs.append(g.contiguous())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            grads = T.autograd.grad(fl, leaves, gs, allow_unused=True, create_graph=create_graph)
        grads = [None if g is None else _to_np(g) for g in grads]
        grads = [np.zeros(tuple(l.shape)) if g is None else g for g, l in zip(grads, leaves)]
    return [_to_np(o) for o in out], grads


def _batch(case, g_all):
    """The case's inputs: each row repeated once per incoming gradient value."""
    rows = case.rows()
    if not case.batched:
        for row in rows:
            for gv in g_all:
                yield [np.asarray(a) for a in row], [gv]
        return
    n = len(rows)
    cols = list(zip(*rows))
    data = []
    for c in cols:
        data.append(np.repeat(np.asarray(c), len(g_all), axis=0))
    yield data, [gv for _ in range(n) for gv in g_all]


def _single_rows(case, data, gvals, dtype, create_graph):
    """PyTorch's answer for one row alone (its scalar kernel path), cached by row."""
    import torch
    cache = {}

    def get(r):
        if r not in cache:
            cache[r] = _run(torch, case, [a[r:r + 1] for a in data], [gvals[r]], dtype, "cpu",
                            create_graph)
        return cache[r]
    return get if case.batched else None


def _by_path(bad, want, got, single, dtype):
    """Relabel as "path" the mismatches where dispatchtorch agrees with PyTorch on the row
    alone: PyTorch's vectorised and scalar CPU kernels disagree there (NaN inputs of
    hardtanh, elu, softshrink...), and the scalar rule is the one its source states."""
    if single is None or not bad or want.ndim == 0 or want.shape[0] == 0:
        return bad
    per = want.size // want.shape[0]
    out = []
    for i, kind in bad:
        if kind != "shape":
            r, j = divmod(i, per)
            alone = single(r)
            if alone is not None and not _mismatch(alone.reshape(-1)[j:j + 1],
                                                   got.reshape(-1)[i:i + 1], dtype):
                kind = "path"
        out.append((i, kind))
    return out


def sweep(case, dtype, device, create_graph, verbose):
    """(forward mismatches, gradient mismatches, error text, examples) of one case."""
    import torch
    nf, ng = collections.Counter(), collections.Counter()
    examples = []
    for data, gvals in _batch(case, GRADS):
        try:
            want_out, want_g = _run(torch, case, data, gvals, dtype, "cpu", create_graph)
        except Exception as e:                       # PyTorch refuses: nothing to compare
            if not case.batched:
                continue                             # that row only
            return nf, ng, f"torch: {type(e).__name__}: {str(e)[:60]}", []
        try:
            got_out, got_g = _run(dt, case, data, gvals, dtype, device, create_graph)
        except Exception as e:
            return nf, ng, f"{type(e).__name__}: {str(e)[:80]}", examples
        single = _single_rows(case, data, gvals, dtype, create_graph)
        for k, (w, g) in enumerate(zip(want_out, got_out)):
            if w is None or g is None or w.dtype.kind not in "fc":
                if w is not None and g is not None and not np.array_equal(w, g):
                    nf["index"] += 1
                    examples.append(("out", k, None, w.tolist()[:6], g.tolist()[:6], data))
                continue
            bad = _by_path(_mismatch(w, g, dtype), w, g, single and (lambda r: single(r)[0][k]), dtype)
            nf.update(k for _, k in bad)
            examples += [("out", k, i, w.reshape(-1)[i] if w.size else None,
                          g.reshape(-1)[i] if g.size == w.size else g.shape, data)
                         for i, kd in bad if kd != "path"][:3]
        if len(want_g) != len(got_g):
            ng["count"] += 1
            examples.append(("grad", "count", None, len(want_g), len(got_g), data))
            continue
        for k, (w, g) in enumerate(zip(want_g, got_g)):
            bad = _by_path(_mismatch(w, g, dtype), w, g, single and (lambda r: single(r)[1][k]), dtype)
            ng.update(k for _, k in bad)
            examples += [("grad", k, i, w.reshape(-1)[i] if w.size else None,
                          g.reshape(-1)[i] if g.size == w.size else g.shape,
                          (data, gvals)) for i, kd in bad if kd != "path"][:3]
    return nf, ng, None, examples


def _describe(ex, case):
    kind, k, i, w, g, where = ex
    if kind == "grad" and i is not None:
        data, gvals = where
        arr = [a for a in data if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
        row = None
        if case.batched and arr:
            per = max(1, arr[k].size // arr[k].shape[0]) if k < len(arr) else 1
            r = i // per
            row = [a[r].tolist() for a in arr]
            gv = gvals[r] if r < len(gvals) else None
        else:
            row, gv = [a.tolist() for a in arr], gvals
        return f"    d/d arg{k} [{i}] torch {w!r} got {g!r}  inputs {row} g {gv}"
    return f"    {kind}{k} [{i}] torch {w!r} got {g!r}"


def _kinds(c):
    """'nan 3 sign 2': the mismatching elements by kind (nan/inf position, value, sign of
    0; path: PyTorch itself differs between its vectorised and scalar paths there)."""
    return " ".join(f"{k} {n}" for k, n in sorted(c.items())) or "-"


def _category(nf, ng, err):
    """A mismatching case's worst kind: PyTorch refuses it, dispatchtorch raises, values
    differ (NaN/inf positions, numbers, shapes, indices), or only signs of zeros."""
    if err:
        return "PyTorch refuses" if err.startswith("torch:") else "raises"
    worst = set(nf) | set(ng)
    return "values" if worst - {"sign", "path"} else "zero signs only"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--dtype", default="float64", choices=sorted(RTOL))
    p.add_argument("--ops", default="*", help="comma-separated globs of case names")
    p.add_argument("--create-graph", action="store_true")
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args(argv)
    pats = a.ops.split(",")
    total = bad = 0
    kinds = collections.Counter()
    print(f"{'case':38} {'forward':18} {'gradient':18} note")
    for case in CASES:
        if not any(fnmatch.fnmatch(case.name, q) for q in pats):
            continue
        total += 1
        nf, ng, err, ex = sweep(case, a.dtype, a.device, a.create_graph, a.verbose)
        if any(k != "path" for k in nf) or any(k != "path" for k in ng) or err:
            bad += 1
            kinds[_category(nf, ng, err)] += 1
            print(f"{case.name:38} {_kinds(nf):18} {_kinds(ng):18} {err or ''}")
            if a.verbose:
                for e in ex[:6]:
                    print(_describe(e, case))
    print(f"{total} cases, {bad} with mismatches ({a.device}, {a.dtype}"
          f"{', create_graph' if a.create_graph else ''}): " +
          ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
