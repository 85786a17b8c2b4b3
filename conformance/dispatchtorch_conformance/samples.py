"""Standard sample generators, in the spirit of PyTorch's OpInfo sample inputs.

Each function returns a generator `gen(g)` for `Case(samples=...)`. Together they
cover 0-d, empty, size-1 and prime-sized tensors, broadcasting, Python scalars,
non-contiguous inputs of every rank 1-5 (transposed, stepped, offset, expanded,
permuted), a large input of more than 2**20 elements, the dtype's extreme values in
a row of their own and at random positions among ordinary values (several per row),
floats spread over binades down to 2**-30, and integers that need the dtype's full
width (a narrower accumulator or intermediate wraps).
"""
from __future__ import annotations

import numpy as np

from .case import Arr

# 1031 * 1021 = 1,052,651 elements (> 2**20), both sizes prime: catches work-group
# tiling that assumes sizes divisible by a power of two.
LARGE = (1031, 1021)

# a partner dtype for the mixed-dtype ("promote") samples: another category or size
PROMOTE_PARTNER = {"bool": "float32", "uint8": "int8", "int8": "uint8", "int16": "int32",
                   "int32": "float32", "int64": "int8", "float16": "bfloat16",
                   "bfloat16": "float16", "float32": "float64", "float64": "int64"}

NO_LARGE = ("grad", "inplace")       # checks left out of the large samples (time)

# non-contiguous shapes of ranks 1-5 (the 2-D ones are in every family already)
RANKS = (("step1", (11,), "step"), ("T3", (2, 3, 5), "T"), ("perm4", (2, 3, 4, 5), "perm"),
         ("step5", (2, 1, 3, 2, 5), "step"))


def _wide(g, shape, nonzero=False):
    """Integers over the dtype's whole range (for a divisor: no 0 and no -1, which
    raise or overflow)."""
    arr = g.arr(shape, *limits_of(g))
    if nonzero:
        v = arr.values.copy()
        v[(v == 0) | (v == -1)] = 1
        arr = Arr(v)
    return arr


def limits_of(g):
    from .dtypes import limits
    return limits(g.dtype)


def _sharp_unary(g, low, high, extremes):
    """The samples of the ranks, binades, specials-among-values and full-width kinds."""
    for name, shape, layout in RANKS:
        yield g.sample(name, g.arr(shape, low, high, layout=layout))
    if g.floating:
        yield g.sample("logscale", g.logscale((8, 16), low, high)).skip_checks("grad")
        if extremes:
            yield g.sample("specials", g.with_specials(g.arr((5, 37), low, high))) \
                .skip_checks("grad")
    elif not g.is_bool and low is None and high is None:
        yield g.sample("wide", _wide(g, (5, 7)))


def unary(low=None, high=None, *, extremes=True, large=True):
    """f(x) over every standard shape and layout; values drawn from [low, high]."""
    def gen(g):
        def a(shape, layout="contig"):
            return g.arr(shape, low, high, layout=layout)
        yield g.sample("0d", a(()))
        yield g.sample("one", a((1,)))
        yield g.sample("empty", a((0,)))
        yield g.sample("empty3d", a((2, 0, 3)))
        yield g.sample("prime", a((7, 13)))
        yield g.sample("odd3d", a((3, 5, 7)))
        yield g.sample("T", a((5, 7), "T"))
        yield g.sample("step", a((6, 9), "step"))
        yield g.sample("offset", a((4, 5), "offset"))
        yield g.sample("expand", a((4, 6), "expand"))
        if large:
            yield g.sample("large", a(LARGE)).skip_checks(*NO_LARGE)
        if extremes:
            yield g.sample("extremes", g.special()).skip_checks("grad")
        yield from _sharp_unary(g, low, high, extremes)
    return gen


def binary(low=None, high=None, *, rlow=None, rhigh=None, scalars=(2, -1.5), rscalar=False,
           nonzero_rhs=False, extremes=True, large=True, promote=True):
    """f(a, b) with broadcasting, 0-d tensors, Python scalars, mixed layouts and
    mixed dtypes. b is drawn from [rlow, rhigh] (default: a's range); nonzero_rhs
    keeps integer b away from 0 and the extremes away from INT_MIN / -1 (integer
    division: the first raises, the second overflows)."""
    rlow = low if rlow is None else rlow
    rhigh = high if rhigh is None else rhigh

    def gen(g):
        def a(shape, layout="contig", dtype=None):
            return g.arr(shape, low, high, layout=layout, dtype=dtype)

        def b(shape, layout="contig", dtype=None):
            arr = g.arr(shape, rlow, rhigh, layout=layout, dtype=dtype)
            if nonzero_rhs and arr.values.dtype.kind in "iub":
                arr = _no_zeros(arr)
            return arr
        yield g.sample("0d", a(()), b(()))
        yield g.sample("same", a((7, 13)), b((7, 13)))
        yield g.sample("bcast", a((3, 1)), b((1, 4)))
        yield g.sample("bcast-lead", a((5,)), b((4, 5)))
        yield g.sample("0d-nd", a(()), b((3, 4)))
        yield g.sample("nd-0d", a((3, 4)), b(()))
        yield g.sample("empty", a((0, 3)), b((1, 3)))
        yield g.sample("T", a((5, 7), "T"), b((5, 7), "T"))
        yield g.sample("step-T", a((4, 6), "step"), b((4, 6), "T"))
        yield g.sample("offset", a((4, 5), "offset"), b((5,)))
        yield g.sample("expand", a((4, 6), "expand"), b((4, 6)))
        for s in scalars:
            yield g.sample(f"scalar{s}", a((3, 5)), s)
            if rscalar:
                yield g.sample(f"rscalar{s}", s, b((3, 5)))
        if promote:
            other = PROMOTE_PARTNER[g.dtype]
            yield g.sample(f"promote-{other}", a((3, 4)), b((3, 4), dtype=other))
        if large:
            yield g.sample("large", a(LARGE), b(LARGE[-1:])).skip_checks(*NO_LARGE)
        if extremes:
            s = g.special().values
            r = s
            if nonzero_rhs and s.dtype.kind in "iub":
                r = s[(s != 0) & (s != -1)]     # x / 0 raises; INT_MIN / -1 overflows (traps)
            yield g.sample("extremes", Arr(s.reshape(-1, 1)), Arr(r.reshape(1, -1))) \
                .skip_checks("grad")
        yield g.sample("step1", a((11,), "step"), b((11,), "step"))
        yield g.sample("perm4-bcast", a((2, 3, 4, 5), "perm"), b((4, 5)))
        yield g.sample("step5-T3", a((2, 1, 3, 2, 5), "step"), b((3, 5, 2), "T"))
        if g.floating:
            yield g.sample("logscale", g.logscale((8, 16), low, high),
                           g.logscale((8, 16), rlow, rhigh)).skip_checks("grad")
            if extremes:
                yield g.sample("specials", g.with_specials(a((5, 17))),
                               g.with_specials(b((5, 17)))).skip_checks("grad")
        elif not g.is_bool and low is None and high is None and rlow is None and rhigh is None:
            yield g.sample("wide", _wide(g, (5, 7)), _wide(g, (5, 7), nonzero_rhs))
    return gen


def _no_zeros(arr):
    v = arr.values.copy()
    v[v == 0] = 1
    if arr.layout == "expand":
        return Arr.expanded(np.where(arr.base == 0, 1, arr.base).astype(v.dtype), arr.shape, arr.grad)
    return Arr(v, arr.layout, arr.grad)


# specials whose reduction does not depend on the order of the terms (no +-max, whose
# sums overflow or not depending on which terms meet first)
ORDER_FREE = (np.nan, np.inf, -np.inf, -0.0, 0.0)


def reduction(low=None, high=None, *, tuple_dims=True, keepdim=True, empty_raises=None,
              large_range=(0.5, 1.5), large_all=True, extremes=True, wide=True,
              subnormals=True):
    """f(x, dim=..., keepdim=...) over every standard layout: all dims (no dim
    argument), one dim, negative dims, dim tuples, 0-d and empty inputs. The large
    samples draw positive values from large_range, so that the result has no
    cancellation and any summation order is within tolerance. empty_raises: for ops
    without an identity (amax, argmax), the errors (all dims, dim 0) that reducing
    an empty (0, 3) tensor must raise. subnormals=False leaves them out of the specials
    among ordinary values (a product's underflow depends on the order of its factors)."""
    def gen(g):
        def a(shape, layout="contig"):
            return g.arr(shape, low, high, layout=layout)
        x = a((3, 4, 5))
        yield g.sample("all", x)
        yield g.sample("dim1", x, dim=1)
        if keepdim:
            yield g.sample("dim-1-keep", x, dim=-1, keepdim=True)
            yield g.sample("dim0-keep", x, dim=0, keepdim=True)
        if tuple_dims:
            yield g.sample("dims02", x, dim=(0, 2))
            if keepdim:
                yield g.sample("dims0-1-keep", x, dim=(0, -1), keepdim=True)
        yield g.sample("0d", a(()))
        yield g.sample("0d-dim0", a(()), dim=0)
        yield g.sample("one", a((1,)), dim=0)
        yield g.sample("prime", a((13, 7, 3)), dim=1)
        yield g.sample("T", a((5, 7), "T"), dim=0)
        yield g.sample("step", a((4, 9), "step"), dim=-1)
        yield g.sample("offset", a((4, 5), "offset"), dim=1)
        yield g.sample("expand", a((4, 6), "expand"), dim=0)
        e = a((0, 3))
        if empty_raises:
            yield g.sample("empty-all", e).raises(empty_raises[0])
            yield g.sample("empty-dim0", e, dim=0).raises(empty_raises[1])
        else:
            yield g.sample("empty-all", e)
            yield g.sample("empty-dim0", e, dim=0)
        yield g.sample("empty-dim1", e, dim=1)
        big = g.arr(LARGE, *large_range)
        if large_all:
            yield g.sample("large-all", big).skip_checks(*NO_LARGE)
        yield g.sample("large-dim1", big, dim=1).skip_checks(*NO_LARGE)
        if extremes:
            s = g.special()
            yield g.sample("extremes", s).skip_checks("grad")
            yield g.sample("extremes-dim0", s, dim=0).skip_checks("grad")
            if g.floating:
                sub = float(g.special().values[10])     # the smallest subnormal
                values = ORDER_FREE + ((sub, -sub) if subnormals else ())
                yield g.sample("specials-dim1", g.with_specials(a((6, 11)), values=values),
                               dim=1).skip_checks("grad")
        e3 = g.sample("empty-dim1-3d", a((2, 0, 3)), dim=1)
        yield e3.raises(empty_raises[1]) if empty_raises else e3
        yield g.sample("perm4-dim2", a((2, 3, 4, 5), "perm"), dim=2)
        yield g.sample("step5-dims", a((2, 1, 3, 2, 5), "step"), dim=-1)
        if wide and low is None and high is None and not g.floating and not g.is_bool:
            # sums that need the full width of the result (int32 sums to int64), from
            # terms a narrower accumulator cannot hold
            lo, hi = limits_of(g)
            yield g.sample("wide", g.arr((4, 16), lo // 32, hi // 32), dim=1)
    return gen


def plus(*gens):
    """Several generators as one (a standard family plus samples of the op's own)."""
    def gen(g):
        for one in gens:
            yield from one(g)
    return gen


def by_dtype(floating, other):
    """One generator for floating dtypes, another for integers and bool."""
    def gen(g):
        return (floating if g.floating else other)(g)
    return gen


def when(predicate, gen_):
    """gen_ only for dtypes where predicate(g) holds (e.g. error samples for ints)."""
    def gen(g):
        return gen_(g) if predicate(g) else ()
    return gen
