"""The case format: what an op's conformance entry declares.

A `Case` names an op of the reference set (its `OpDef` name in
`dispatchtorch.dispatch.OPS`), how to call it and where its sample inputs come
from. A sample generator is a function `gen(g) -> iterable of Sample`; `g` is a
`Gen`, bound to one case and one dtype, that makes host arrays from a random
generator seeded by the case name and dtype, so every sample is reproducible from
its id `case/dtype/sample`.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

from . import dtypes as DT

CHECKS = ("forward", "grad", "inplace", "alias")


def seed_of(text: str) -> int:
    """A stable seed for a case id (crc32: the same on every platform and run)."""
    return zlib.crc32(text.encode())


@dataclass(frozen=True)
class Tol:
    """A widened tolerance for some output dtypes, with the reason it is needed.

    `Tol("accumulation order differs between backends", float32=(1e-5, 1e-4))`:
    values are (rtol, atol); each is used only where it is wider than the default.
    """

    reason: str
    float16: tuple | None = None
    bfloat16: tuple | None = None
    float32: tuple | None = None
    float64: tuple | None = None

    def __post_init__(self):
        if not self.reason or not self.reason.strip():
            raise ValueError("Tol needs a reason: say why this op may differ more than the default")

    def get(self, dtype_name):
        return getattr(self, dtype_name, None) if dtype_name in DT.FLOATING else None


class Arr:
    """A tensor argument: its values on the host and how it is laid out on the device.

    layout: "contig" (a fresh tensor), "T" (the transpose of a contiguous tensor),
    "step" (every other element of a wider tensor, so the view has an offset and a
    stride of 2), "offset" (a contiguous view that starts inside its storage) or
    "expand" (a tensor with size-1 dims broadcast by stride 0; see `Arr.expanded`) or
    "perm" (every dim reversed: the permutation of a contiguous tensor, strides
    increasing).
    The op receives the view; its gradient is taken with respect to the storage.
    `values` is what the op sees. `base` is the host array that is uploaded.
    """

    __slots__ = ("values", "layout", "grad", "base", "shape")
    LAYOUTS = ("contig", "T", "step", "offset", "expand", "perm")

    def __init__(self, values, layout="contig", grad=True, *, base=None):
        values = np.asarray(values)
        if layout not in self.LAYOUTS:
            raise ValueError(f"unknown layout {layout!r}; expected one of {self.LAYOUTS}")
        if layout in ("T", "perm") and values.ndim < 2 or \
                layout in ("step", "offset") and values.ndim < 1:
            layout = "contig"       # 0-d and 1-d tensors have no such view
        self.values, self.layout, self.grad, self.shape = values, layout, grad, values.shape
        if base is not None:
            self.base = base
        elif layout == "contig":
            self.base = np.array(values, order="C")          # (ascontiguousarray makes 0-d 1-d)
        elif layout == "T":
            self.base = np.array(np.swapaxes(values, -1, -2), order="C")
        elif layout == "perm":
            self.base = np.array(values.transpose(), order="C")
        elif layout == "step":
            n = values.shape[-1]
            base = np.full(values.shape[:-1] + (2 * n + 1,), DT.junk(values.dtype), values.dtype)
            base[..., 1::2] = values
            self.base = base
        elif layout == "offset":
            self.base = np.concatenate([np.full(3, DT.junk(values.dtype), values.dtype),
                                        values.reshape(-1)])
        else:
            raise ValueError("use Arr.expanded(small, shape) for an expanded input")

    @classmethod
    def expanded(cls, small, shape, grad=True):
        """`small` broadcast to `shape` on the device by `expand` (stride-0 dims)."""
        small = np.array(small, order="C")
        return cls(np.broadcast_to(small, shape), "expand", grad, base=small)

    @property
    def dtype(self):
        return DT.name_of(self.values.dtype)

    def view(self, t):
        """The device tensor the op receives, made from the uploaded base `t`."""
        layout = self.layout
        if layout == "contig":
            return t
        if layout == "T":
            return t.transpose(-1, -2)
        if layout == "perm":
            return t.permute(*range(t.dim() - 1, -1, -1))
        if layout == "step":
            return t[..., 1::2]
        if layout == "offset":
            return t[3:].view(self.shape)
        return t.expand(self.shape)

    def __repr__(self):
        return f"Arr({self.dtype}{list(self.shape)}, {self.layout})"


@dataclass
class Sample:
    """One call of the op: positional and keyword arguments (Arr, numbers, lists...).

    Chain `.skip_checks("grad", ...)` to leave checks out for this sample,
    `.raises(RuntimeError)` for a call that must fail (the CPU reference must raise
    that type, and the backend must raise an error of the same kind) and
    `.needs_dtypes("float16")` for dtypes it uses that no tensor argument has.
    """

    name: str
    args: tuple
    kwargs: dict
    skipped: set = field(default_factory=set)
    error: type | None = None
    tol: Tol | None = None
    needs: set = field(default_factory=set)

    def needs_dtypes(self, *names):
        """Dtypes the call uses beyond its tensor arguments' (a cast's target): a device
        that does not claim one skips the sample."""
        self.needs.update(names)
        return self

    def skip_checks(self, *checks):
        for c in checks:
            if c not in CHECKS:
                raise ValueError(f"unknown check {c!r}; expected one of {CHECKS}")
        self.skipped.update(checks)
        return self

    def raises(self, exc_type=RuntimeError):
        self.error = exc_type
        self.skipped.update(("grad", "inplace", "alias"))
        return self

    def widen(self, tol: Tol):
        self.tol = tol
        return self

    def arrays(self):
        """Every Arr among the arguments (nested lists included)."""
        out = []
        _collect(self.args, out)
        _collect(tuple(self.kwargs.values()), out)
        return out

    def describe(self):
        parts = [_describe(a) for a in self.args]
        parts += [f"{k}={_describe(v)}" for k, v in self.kwargs.items()]
        return "(" + ", ".join(parts) + ")"


def _collect(items, out):
    for a in items:
        if isinstance(a, Arr):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            _collect(a, out)


def _describe(a):
    if isinstance(a, (list, tuple)):
        inner = ", ".join(_describe(x) for x in a)
        return f"[{inner}]" if isinstance(a, list) else f"({inner}{',' if len(a) == 1 else ''})"
    return repr(a)


class Gen:
    """Makes the sample inputs of one case for one dtype, on the host.

    `g.dtype` is the dtype under test (a name such as "float32"). Ranges default to
    [-3, 3] for floats, [-9, 9] for signed and [0, 9] for unsigned integers; bool
    values are random. Values are drawn with `g.rng`, seeded from `case/dtype`.
    """

    def __init__(self, case_name: str, dtype: str):
        self.case = case_name
        self.dtype = dtype
        self.np = DT.NP[dtype]
        self.rng = np.random.default_rng(seed_of(f"{case_name}/{dtype}"))

    @property
    def floating(self):
        return self.dtype in DT.FLOATING

    @property
    def is_bool(self):
        return self.dtype == "bool"

    def values(self, shape, low=None, high=None, dtype=None):
        """Random host values of `shape` in [low, high] (clipped to the dtype's range)."""
        return DT.random(self.rng, shape, dtype or self.dtype, low, high)

    def arr(self, shape, low=None, high=None, *, layout="contig", dtype=None, grad=True):
        """A random tensor argument of `shape`, laid out as `layout` on the device."""
        dtype = dtype or self.dtype
        if layout == "expand":
            shape = tuple(shape)
            if not shape:
                return Arr(self.values(shape, low, high, dtype), grad=grad)
            small = (1,) + shape[1:] if shape[0] != 1 else shape[:-1] + (1,)
            return Arr.expanded(self.values(small, low, high, dtype), shape, grad=grad)
        return Arr(self.values(shape, low, high, dtype), layout, grad)

    def host(self, values, *, layout="contig", dtype=None, grad=True):
        """A tensor argument with the given values, cast to the dtype under test."""
        return Arr(np.asarray(values).astype(DT.NP[dtype or self.dtype]), layout, grad)

    def special(self, dtype=None, *, layout="contig"):
        """The dtype's extreme values: for floats huge, tiny, subnormal, -0.0, +-inf and
        NaN; for integers the minimum, maximum, 0, 1 and -1."""
        return Arr(DT.special(dtype or self.dtype), layout)

    def logscale(self, shape, low=None, high=None, *, layout="contig", grad=True):
        """Floats whose magnitudes spread evenly over binades, from 2**-30 (near zero,
        where naive formulas such as exp(x) - 1 lose every digit) up to the range's
        bound; signs random where the range allows. Inside [low, high]."""
        lo = DT._default_range(self.dtype)[0] if low is None else low
        hi = DT._default_range(self.dtype)[1] if high is None else high
        top = max(abs(lo), abs(hi), 2.0 ** -29)
        mag = np.exp2(self.rng.uniform(-30, np.log2(top), size=shape))
        sign = np.where(self.rng.random(shape) < 0.5, -1.0, 1.0) if lo < 0 < hi else \
            (-1.0 if hi <= 0 else 1.0)
        v = np.clip(mag * sign, lo, hi)
        if lo > 0:      # a positive domain (log): log-uniform between its bounds
            v = np.exp2(self.rng.uniform(np.log2(lo), np.log2(hi), size=shape))
        return Arr(v.astype(self.np), layout, grad)

    def with_specials(self, arr: "Arr", count=None, values=None):
        """arr with the dtype's special values (NaN, +-inf, -0.0, subnormals; for
        integers the extremes) written at random positions: the first and the last
        element, and `count` more (default: a third of a row's length per row), so a
        row holds several. Floats only get the values of `values` when given."""
        v = np.array(arr.values, copy=True)
        if v.size == 0:
            return arr
        pool = np.asarray(values if values is not None else DT.special(self.dtype)).astype(v.dtype)
        flat = v.reshape(-1)
        n = count if count is not None else max(2, flat.size // 3)
        where = np.concatenate([[0, flat.size - 1], self.rng.integers(0, flat.size, n)])
        flat[where] = pool[self.rng.integers(0, pool.size, where.size)]
        return Arr(v, arr.layout if arr.layout != "expand" else "contig", arr.grad)

    def index(self, shape, high, *, low=0, layout="contig"):
        """A random int64 index tensor with values in [low, high)."""
        v = self.rng.integers(low, high, size=shape, dtype=np.int64) if high > low \
            else np.zeros(shape, np.int64)
        return Arr(v, layout, grad=False)

    def mask(self, shape, p=0.5, *, layout="contig"):
        """A random bool tensor, True with probability p."""
        return Arr(self.rng.random(shape) < p, layout, grad=False)

    def sample(self, name, *args, **kwargs) -> Sample:
        return Sample(name, args, kwargs)


SampleGen = Callable[[Gen], Iterable[Sample]]


@dataclass
class Case:
    """The conformance entry of one op (or one calling variant of it).

    op:       the OpDef name in dispatchtorch.dispatch.OPS that this case checks.
    fn:       how to call it: fn(*sample.args, **sample.kwargs) with Arr replaced by
              device tensors; returns a tensor, a number or a (nested) tuple of them.
    samples:  a sample generator, `gen(g: Gen) -> iterable of Sample`.
    name:     the case's unique name (defaults to op); variants such as "add_alpha".
    dtypes:   the dtypes to test: a tuple of names or a category ("all", "numeric",
              "float", "integral", "floating", "integer"); defaults from the op's row.
    grad:     check gradients (defaults to the op's `differentiable`).
    inplace:  the in-place variant: a method name ("exp_") or fn(self, *rest, **kw).
    alias:    the result is a view of the first argument: writing through it must
              change that argument's storage on the backend as on the CPU.
    tol:      a `Tol` widening the default tolerances, with its reason.
    skip:     {dtype: reason} for dtypes the op does not define.
    out_device: where the result lives: "input" (the backend's device) or "cpu".
    """

    op: str
    fn: Callable[..., Any]
    samples: SampleGen
    name: str = ""
    dtypes: Any = None
    grad: bool | None = None
    inplace: Any = None
    alias: bool = False
    tol: Tol | None = None
    skip: dict = field(default_factory=dict)
    out_device: str = "input"

    def __post_init__(self):
        self.name = self.name or self.op
        if self.out_device not in ("input", "cpu"):
            raise ValueError(f"case {self.name}: out_device must be 'input' or 'cpu'")

    def resolved_dtypes(self, opdef=None):
        """The dtype names this case tests, in the canonical order."""
        spec = self.dtypes
        if spec is None:
            from dispatchtorch.dispatch.registry import input_category
            spec = input_category(opdef) if opdef is not None else "all"
        return DT.expand(spec, where=f"case {self.name}")

    def checks_grad(self, opdef=None):
        if self.grad is not None:
            return self.grad
        return bool(opdef is not None and opdef.differentiable)

    def call_inplace(self, args, kwargs):
        if isinstance(self.inplace, str):
            return getattr(args[0], self.inplace)(*args[1:], **kwargs)
        return self.inplace(*args, **kwargs)
