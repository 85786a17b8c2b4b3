"""The op-test harness: sample cases run on dispatchtorch and compared with numpy (float64
references), with PyTorch 2.13 CPU where it is installed (dev-only), and with finite
differences (gradcheck in float64).

A case names its op (a row of the op table), a call `fn(T, *inputs)` that works for
T = torch and T = dispatchtorch alike, and input specs built from one seed.
"""
from __future__ import annotations

import dataclasses
import warnings
from typing import Callable

import numpy as np
import pytest

import dispatchtorch as dt

FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")
NUMERIC = INTS + FLOATS
ALL = ("bool",) + NUMERIC
SIGNED = ("int8", "int16", "int32", "int64") + FLOATS


@dataclasses.dataclass(frozen=True)
class A:
    """An array input: shape, value kind and (None: the dtype under test) its dtype."""
    shape: tuple = (3, 4)
    kind: str | tuple = "normal"      # a value kind, or an op row's sample domain (low, high)
    dtype: str | None = None
    noncontig: bool = True            # also run it as a strided (non-contiguous) view
    grad: bool = True                 # a float input the gradient is taken for

    def values(self, rng, dtype):
        n = int(np.prod(self.shape)) if self.shape else 1
        k = self.kind
        if isinstance(k, tuple):           # an op row's sample domain (low, high)
            v = rng.uniform(k[0], k[1], n)
        elif k == "normal":
            v = rng.standard_normal(n) * 2
        elif k == "positive":
            v = rng.uniform(0.5, 2.5, n)
        elif k == "unit":
            v = rng.uniform(-0.9, 0.9, n)
        elif k == "prob":
            v = rng.uniform(0.05, 0.95, n)
        elif k == "above1":
            v = rng.uniform(1.2, 3.0, n)
        elif k == "int":
            v = rng.integers(-5, 6, n).astype(np.float64)
        elif k == "small":                 # small non-negative integers (many ties)
            v = rng.integers(0, 4, n).astype(np.float64)
        elif k == "distinct":              # no ties (sort-like gradients are defined)
            v = rng.permutation(n).astype(np.float64) - n / 2 + rng.uniform(0.1, 0.4, n)
        elif k == "nonzero":
            v = rng.uniform(0.5, 2.0, n) * rng.choice([-1, 1], n)
        elif k == "special":               # NaN, infinities, signed zeros and plain numbers
            v = rng.standard_normal(n) * 2
            specials = [np.nan, np.inf, -np.inf, 0.0, -0.0]
            for i in range(min(n, len(specials))):
                v[(i * 7) % n] = specials[i]
        elif k == "bool":
            v = rng.random(n) < 0.5
        elif k.startswith("index"):         # "index3": valid indices of a dim of size 3
            v = rng.integers(0, int(k[5:]), n).astype(np.float64)
        else:
            raise ValueError(k)
        v = v.reshape(self.shape)
        d = self.dtype or dtype
        if d == "bool":
            return v != 0
        if d in INTS:
            v = np.nan_to_num(v, nan=0, posinf=0, neginf=0)
            v = np.abs(v) if d == "uint8" else v
            return np.trunc(v).astype(d)
        return v.astype(np.float64)


@dataclasses.dataclass(frozen=True)
class Case:
    op: str                                  # the row of the op table this exercises
    fn: Callable                             # fn(T, *inputs) -> tensors / tuples / numbers
    inputs: tuple = (A(),)                   # A specs or literal values (passed as is)
    dtypes: tuple = FLOATS
    ref: Callable | None = None              # numpy float64 reference: ref(*arrays)
    grad: bool = True                        # differentiable in the float inputs
    gradgrad: bool = False                   # also check second derivatives
    fd: bool = True                          # finite differences apply (not at a kink)
    torch_grad: bool = True                  # PyTorch's gradient is right (see the case)
    rtol: float | None = None
    atol: float | None = None
    name: str = ""
    raises: type | None = None               # the error PyTorch raises (checked without it)
    layouts: bool = True                     # also run with non-contiguous inputs

    @property
    def id(self):
        return f"{self.op}[{self.name or _describe(self.inputs)}]"


def _describe(inputs):
    parts = []
    for x in inputs:
        parts.append("x".join(map(str, x.shape)) or "0d" if isinstance(x, A) else repr(x)[:12])
    return ",".join(parts)


def arrays(case, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [x.values(rng, dtype) if isinstance(x, A) else x for x in case.inputs]


def dtype_of(lib, name):
    return getattr(lib, name if name != "bool" else "bool")


def to_lib(lib, value, spec, dtype, noncontig=False, requires_grad=False):
    """A numpy array as a tensor of `lib` (torch or dispatchtorch), optionally as a
    strided view with the same values."""
    if not isinstance(spec, A):
        return value
    d = spec.dtype or dtype
    host = np.asarray(value)
    if d == "bfloat16":
        t = lib.tensor(host.astype(np.float32)).to(lib.bfloat16)
    else:
        t = lib.tensor(host)
        t = t.to(dtype_of(lib, d))
    if noncontig and t.dim() >= 1 and spec.noncontig:
        wide = lib.zeros(t.shape[:-1] + (2 * t.shape[-1],), dtype=t.dtype)
        wide[..., ::2] = t
        t = wide[..., ::2]
    if requires_grad and spec.grad and t.dtype.is_floating_point:
        t = t.detach().requires_grad_(True) if noncontig else t.requires_grad_(True)
    return t


def run(lib, case, vals, dtype, noncontig=False, requires_grad=False):
    ins = [to_lib(lib, v, s, dtype, noncontig, requires_grad) for v, s in zip(vals, case.inputs)]
    return ins, case.fn(lib, *ins)


_RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 1e-7}
_ATOL = {"float16": 1e-3, "bfloat16": 1e-2, "float32": 1e-5, "float64": 1e-7}


def tolerance(case, dtype):
    """The case's tolerances; None: by the dtype of each compared result."""
    return case.rtol, case.atol


def host(t):
    """A dispatchtorch or torch tensor as a float64 (or integer) numpy array."""
    t = t.detach().cpu()
    if getattr(t, "_is_zerotensor", lambda: False)():      # torch's symbolic zeros
        return np.zeros(tuple(t.shape))
    if t.dtype.is_floating_point:
        t = t.double()
    return np.asarray(t.numpy())


def assert_close(ours, theirs, rtol, atol, where="result"):
    """ours (dispatchtorch) against theirs (torch, numpy or Python), recursively: same
    structure, dtype names, shapes and values (NaN where NaN)."""
    if hasattr(theirs, "dtype") and type(theirs).__module__.startswith("torch"):
        assert isinstance(ours, dt.Tensor), f"{where}: expected a tensor, got {type(ours)}"
        tname = str(theirs.dtype).split(".")[-1]
        assert ours.dtype.name == tname, f"{where}: dtype {ours.dtype.name} != torch {tname}"
        assert tuple(ours.shape) == tuple(theirs.shape), \
            f"{where}: shape {tuple(ours.shape)} != torch {tuple(theirs.shape)}"
        a, b = host(ours), host(theirs)
        _values(a, b, _RTOL.get(tname, 0) if rtol is None else rtol,
                _ATOL.get(tname, 0) if atol is None else atol, where)
        return
    if isinstance(theirs, np.ndarray):
        assert isinstance(ours, dt.Tensor), f"{where}: expected a tensor, got {type(ours)}"
        assert tuple(ours.shape) == theirs.shape, f"{where}: shape {tuple(ours.shape)} != {theirs.shape}"
        name = ours.dtype.name
        _values(host(ours), theirs, _RTOL.get(name, 0) if rtol is None else rtol,
                _ATOL.get(name, 0) if atol is None else atol, where)
        return
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)), f"{where}: expected a sequence, got {type(ours)}"
        assert len(ours) == len(theirs), f"{where}: {len(ours)} results != {len(theirs)}"
        fields = getattr(theirs, "_fields", None)
        if fields is not None:
            assert getattr(ours, "_fields", None) == fields, \
                f"{where}: fields {getattr(ours, '_fields', None)} != {fields}"
        for i, (o, t) in enumerate(zip(ours, theirs)):
            assert_close(o, t, rtol, atol, f"{where}[{i}]")
        return
    if isinstance(theirs, (bool, int, float)):
        assert type(ours) is type(theirs) or isinstance(ours, (int, float)), \
            f"{where}: {type(ours)} != {type(theirs)}"
        assert ours == theirs or (ours != ours and theirs != theirs), f"{where}: {ours} != {theirs}"
        return
    raise TypeError(f"{where}: cannot compare {type(theirs)}")


def _values(a, b, rtol, atol, where):
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        np.testing.assert_array_equal(a, b, err_msg=where)
        return
    a, b = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=f"{where}: NaN positions")
    inf = np.isinf(b)
    np.testing.assert_array_equal(a[inf], b[inf], err_msg=f"{where}: infinities")
    ok = ~np.isnan(b) & ~inf
    np.testing.assert_allclose(a[ok], b[ok], rtol=rtol, atol=atol, err_msg=where)


def call(lib, case, vals, dtype, noncontig=False):
    """(result, exception) of running the case with lib."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return run(lib, case, vals, dtype, noncontig)[1], None
        except Exception as exc:        # noqa: BLE001 (compared with the other library's)
            return None, exc


def same_error(ours, theirs, where):
    """Both raised, with the same kind of error (ours may be a subclass)."""
    names = [c.__name__ for c in type(ours).__mro__]
    kind = type(theirs).__name__
    if kind == "NotImplementedError" and "RuntimeError" in names:
        kind = "RuntimeError"      # tolerated only one way: theirs is stricter
    assert type(theirs).__name__ in names or kind in names, \
        f"{where}: dispatchtorch raised {type(ours).__name__}({ours}); torch raised " \
        f"{type(theirs).__name__}({theirs})"


def weights_like(out, lib, seed=1):
    rng = np.random.default_rng(seed)
    return lib.tensor(rng.standard_normal(tuple(out.shape)), dtype=out.dtype)


def float_outputs(r):
    if isinstance(r, (tuple, list)):
        return [o for x in r for o in float_outputs(x)]
    if hasattr(r, "dtype") and r.dtype.is_floating_point and r.requires_grad:
        return [r]
    return []


def backward_grads(lib, case, vals, dtype, noncontig=False):
    """Gradients of sum(out * w) for fixed random weights w, per float input."""
    ins, out = run(lib, case, vals, dtype, noncontig, requires_grad=True)
    outs = float_outputs(out)
    leaves = [x for x, s in zip(ins, case.inputs) if isinstance(s, A) and s.grad
              and hasattr(x, "requires_grad") and x.requires_grad]
    if not outs or not leaves:
        return None
    total = sum((o * weights_like(o, lib, seed=i + 1)).sum() for i, o in enumerate(outs))
    grads = lib.autograd.grad(total, leaves, allow_unused=True)
    return [g if g is not None else lib.zeros_like(x) for g, x in zip(grads, leaves)]


def gradcheck_case(case, vals, gradgrad=False):
    """Finite differences in float64 against the analytical gradient."""
    ins = [to_lib(dt, v, s, "float64", False, requires_grad=True)
           for v, s in zip(vals, case.inputs)]
    diff = [i for i, (x, s) in enumerate(zip(ins, case.inputs))
            if isinstance(s, A) and s.grad and isinstance(x, dt.Tensor) and x.requires_grad]

    def f(*args):
        full = list(ins)
        for i, a in zip(diff, args):
            full[i] = a
        return tuple(float_outputs(case.fn(dt, *full)))

    args = tuple(ins[i] for i in diff)
    check = dt.autograd.gradgradcheck if gradgrad else dt.autograd.gradcheck
    return check(f, args, eps=1e-6, atol=1e-5, rtol=1e-3)


def numel(case):
    return sum(int(np.prod(x.shape)) for x in case.inputs if isinstance(x, A))



def torch_or_none():
    try:
        import torch
    except ImportError:            # dev-only comparisons are skipped without PyTorch
        return None
    return torch


def quantized(v, dtype):
    """Values as the dtype holds them, in float64 (what a float64 reference reads)."""
    if not isinstance(v, np.ndarray) or v.dtype.kind != "f":
        return v
    if dtype == "bfloat16":
        import ml_dtypes
        return v.astype(ml_dtypes.bfloat16).astype(np.float64)
    return v.astype(dtype).astype(np.float64) if dtype in FLOATS else v


def check_forward(case, dtype):
    """Forward values, dtype, shape and errors against PyTorch (if installed) and the
    numpy float64 reference, on contiguous and strided inputs."""
    torch = torch_or_none()
    vals = arrays(case, dtype)
    layouts = [False]
    if case.layouts and dtype in ("bool", "int64", "float32") and any(
            isinstance(s, A) and s.noncontig and len(s.shape) for s in case.inputs):
        layouts.append(True)
    for nc in layouts:
        where = f"{case.id} {dtype}{' strided' if nc else ''}"
        ours, oerr = call(dt, case, vals, dtype, nc)
        if case.raises is not None:
            assert oerr is not None, f"{where}: expected {case.raises.__name__}, got {ours}"
            assert isinstance(oerr, case.raises), f"{where}: raised {oerr!r}"
        if torch is not None:
            theirs, terr = call(torch, case, vals, dtype, nc)
            if terr is not None:
                assert oerr is not None, f"{where}: torch raised {terr!r}; dispatchtorch gave {ours}"
                same_error(oerr, terr, where)
                continue
            if oerr is not None:
                raise AssertionError(f"{where}: dispatchtorch raised {oerr!r}; torch did not") \
                    from oerr
            assert_close(ours, theirs, *tolerance(case, dtype), where)
        elif oerr is not None and case.raises is None:
            pytest.skip(f"{where}: dispatchtorch raised {type(oerr).__name__}; whether PyTorch "
                        "raises too is checked only where PyTorch is installed (make test does)")
        if case.ref is not None and oerr is None and dtype in FLOATS and all(
                s.dtype in (None,) + FLOATS for s in case.inputs if isinstance(s, A)):
            with np.errstate(all="ignore"):       # the reference meets NaN/inf on purpose
                expected = case.ref(*[quantized(v, s.dtype or dtype) if isinstance(s, A) else v
                                      for v, s in zip(vals, case.inputs)])
            assert_close(ours, _as_arrays(expected), *tolerance(case, dtype), where + " vs numpy")


def _as_arrays(x):
    if isinstance(x, (tuple, list)):
        return type(x)(_as_arrays(v) for v in x) if not hasattr(x, "_fields") else \
            tuple(_as_arrays(v) for v in x)
    return np.asarray(x)


def check_grad(case, dtype="float64"):
    """gradcheck in float64 (finite differences), and the gradient of sum(out * w)
    against PyTorch's on contiguous and strided inputs."""
    vals = arrays(case, dtype)
    if call(dt, case, vals, dtype)[1] is not None:
        return           # an invalid call (checked by the forward test): nothing to differentiate
    if case.fd:
        assert gradcheck_case(case, vals, gradgrad=case.gradgrad)
    torch = torch_or_none()
    if torch is None or not case.torch_grad:
        return
    for nc in (False, True) if case.layouts else (False,):
        ours = backward_grads(dt, case, vals, dtype, nc)
        try:
            theirs = backward_grads(torch, case, vals, dtype, nc)
        except (RuntimeError, NotImplementedError):
            continue          # a derivative PyTorch lacks (asinh_, remainder(scalar, t), ...)
        assert (ours is None) == (theirs is None), f"{case.id}: gradient presence differs"
        if ours is not None:
            assert_close(list(ours), list(theirs), 1e-6, 1e-7, f"{case.id} grad")


def make_tests(cases):
    """test_forward (every case x dtype) and test_grad (every differentiable case) for a
    family's cases; a test module binds them at top level for pytest to collect."""
    forward = [(c, d) for c in cases for d in c.dtypes]
    grad = [c for c in cases if c.grad and any(d.startswith(("float", "bfloat")) for d in c.dtypes)]

    @pytest.mark.parametrize("case,dtype", forward, ids=[f"{c.id}-{d}" for c, d in forward])
    def test_forward(case, dtype):
        check_forward(case, dtype)

    @pytest.mark.parametrize("case", grad, ids=[c.id for c in grad])
    def test_grad(case):
        check_grad(case)

    return test_forward, test_grad
