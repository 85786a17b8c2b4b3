"""Every prim of the catalogue, written once over an array module (`_array_module`):
cupy on a GPU, numpy in the CPU-only tests, with the reference's exact semantics.

Conventions: kernels are `fn(*outs, *inputs, **params)` and write into their outputs
(`dispatchtorch.backend.prims`). A bfloat16 handle is a uint16 array of bits (`_bf16`);
float16 and bfloat16 compute in float32 and round once. Elementwise outputs may be
views of an input only with the input's exact layout (the frontend copies otherwise),
so no kernel here checks for partial overlap. Nothing here synchronises with the host
except integer div/fmod, which must look for a zero divisor to raise as the CPU does.
"""
from __future__ import annotations

import numpy as np

from . import _scatter
from ._bf16 import CHAR as BF16
from ._scans import inclusive_scan

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
I64 = np.dtype(np.int64)
_LOWP = frozenset("eH")          # float16, bfloat16 (stored as uint16)
_FLOAT = frozenset("efdH")

_UNARY_FLOAT = {
    "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2",
    "log10": "log10", "log1p": "log1p", "sqrt": "sqrt", "sin": "sin", "cos": "cos",
    "tan": "tan", "asin": "arcsin", "acos": "arccos", "atan": "arctan", "sinh": "sinh",
    "cosh": "cosh", "tanh": "tanh", "asinh": "arcsinh", "acosh": "arccosh",
    "atanh": "arctanh", "floor": "floor", "ceil": "ceil", "round": "rint", "trunc": "trunc",
    "neg": "negative", "abs": "absolute",
}
_SPECIAL = ("erf", "erfc", "erfinv")
_BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "pow": "power",
    "maximum": "maximum", "minimum": "minimum", "atan2": "arctan2",
    "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
    "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift", "gcd": "gcd",
}
_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
            "gt": "greater", "ge": "greater_equal"}


def _computing_in(fn):
    """A binary special function (zeta is a plain function, not a ufunc) taking a ufunc's
    out= and dtype= (float16 computes in float32)."""
    def call(a, b, out=None, dtype=None):
        if dtype is not None:
            a, b = a.astype(dtype), b.astype(dtype)
        r = fn(a, b)
        if out is None:
            return r
        out[...] = r
        return out
    return call


def build_kernels(am) -> dict:
    """The kernel table `op name -> fn` over the array module `am`: every prim, and the
    composites that run faster as one kernel."""
    xp = am.xp

    def values(x):
        """x's values in a dtype xp computes with (bfloat16 bits -> float32)."""
        return am.bf16_to_f32(x) if x.dtype.char == BF16 else x

    def values32(x):
        """float16 and bfloat16 widened to float32, others as they are."""
        c = x.dtype.char
        return am.bf16_to_f32(x) if c == BF16 else x.astype(F32) if c == "e" else x

    def store(out, r):
        """out[...] = r with a C cast (rounding to bfloat16 where out holds it)."""
        if out.dtype.char == BF16:
            am.f32_to_bf16(r, out)
        else:
            xp.copyto(out, r, casting="unsafe")

    # -- elementwise -----------------------------------------------------------------
    def unary(fn):
        def kernel(out, x):
            c = x.dtype.char
            if c == BF16:
                am.f32_to_bf16(fn(am.bf16_to_f32(x)), out)
            elif c == "e":
                fn(x, out=out, dtype=F32)
            else:
                fn(x, out=out)
        return kernel

    def binary(fn):
        def kernel(out, a, b):
            c = a.dtype.char
            if c == BF16:
                am.f32_to_bf16(fn(am.bf16_to_f32(a), am.bf16_to_f32(b)), out)
            elif c == "e":
                fn(a, b, out=out, dtype=F32)
            else:
                fn(a, b, out=out)
        return kernel

    def compare(fn):
        def kernel(out, a, b):
            if a.dtype.char == BF16:
                a, b = am.bf16_to_f32(a), am.bf16_to_f32(b)
            fn(a, b, out=out)
        return kernel

    true_divide, float_fmod = binary(xp.true_divide), binary(xp.fmod)

    def c_division(a, b, what):
        """C's integer a / b (toward zero) as (floor quotient, floor remainder, the
        correction to both), in integer ops only: cupy's integer fmod goes through
        double and is inexact past 2**53."""
        if bool((b == 0).any()):                 # synchronises: the CPU raises here too
            raise ZeroDivisionError(f"integer {what} by zero")
        q = xp.floor_divide(a, b)
        r = a - q * b                            # the sign of b
        return q, r, (r != 0) & ((r < 0) != (a < 0))

    def div(out, a, b):
        if a.dtype.char in _FLOAT:
            return true_divide(out, a, b)
        q, _, fix = c_division(a, b, "division")
        xp.add(q, fix, out=out, casting="unsafe")

    def fmod(out, a, b):
        if a.dtype.char in _FLOAT:
            return float_fmod(out, a, b)
        _, r, fix = c_division(a, b, "modulo")
        xp.subtract(r, fix * b, out=out, casting="unsafe")

    def bitwise_not(out, x):
        (xp.logical_not if x.dtype.char == "?" else xp.invert)(x, out=out)

    # -- composites with a kernel of their own: one pass instead of the decomposition's
    # several, PyTorch's values -------------------------------------------------------------
    bf16_sign, bf16_inf = np.uint16(0x8000), np.uint16(0x7F80)

    def relu(out, x):           # x <= 0 ? 0 : x (NaN passes through); maximum(x, 0) for ints
        c = x.dtype.char
        if c in "fd":
            return am.relu(out, x)
        zero = xp.zeros((), x.dtype)
        if c == BF16:           # x <= 0 from the bits: a zero, or a negative that is not NaN
            magnitude = x & np.uint16(0x7FFF)
            am.where(out, (magnitude == 0) | ((x >= bf16_sign) & (magnitude <= bf16_inf)),
                     zero, x)
        elif c == "e":
            am.where(out, x <= 0, zero, x)
        else:
            xp.maximum(x, zero, out=out)

    # -- reductions and scans ----------------------------------------------------------
    def accumulate_into(fn):
        """sum/prod/cumsum/cumprod: accumulate in out's dtype (float32 for low precision)."""
        def run(out, x, **kw):
            acc = F32 if out.dtype.char in _LOWP else out.dtype
            if acc == out.dtype:
                fn(values(x), dtype=acc, out=out, **kw)
            else:
                store(out, fn(values(x), dtype=acc, **kw))
        return run

    def reduction(fn):
        run = accumulate_into(fn)

        def kernel(out, x, *, dims, keepdim):
            run(out, x, axis=dims, keepdims=keepdim)
        return kernel

    def extreme(fn):
        def kernel(out, x, *, dims, keepdim):
            if x.dtype.char == BF16:
                store(out, fn(am.bf16_to_f32(x), axis=dims, keepdims=keepdim))
            else:
                fn(x, axis=dims, keepdims=keepdim, out=out)
        return kernel

    def arg(fn):
        def kernel(out, x, *, dim, keepdim):
            fn(values(x), axis=dim, keepdims=keepdim, out=out)
        return kernel

    def scan(fn):
        run = accumulate_into(fn)

        def kernel(out, x, *, dim):
            run(out, x, axis=dim)
        return kernel

    def running_extreme(ufunc):
        def kernel(out_values, indices, x, *, dim):
            n = x.shape[dim]
            if n == 0:
                return
            xs = values(x)
            run = inclusive_scan(xp, ufunc, xs, dim)
            # the index: the last position so far where x reached its running value
            hit = xs == run
            if xs.dtype.kind == "f":
                hit |= xs != xs
            shape = [1] * x.ndim
            shape[dim] = n
            pos = xp.arange(n, dtype=I64).reshape(shape)
            idx = inclusive_scan(xp, xp.maximum, xp.where(hit, pos, I64.type(0)), dim)
            indices[...] = idx
            store(out_values, run)
        return kernel

    # -- linear algebra, indexing, sorting ---------------------------------------------
    def matmul(out, a, b):
        c = a.dtype.char
        if c == BF16 or (c == "e" and not am.native_half_matmul):
            store(out, xp.matmul(values32(a), values32(b)))
        else:
            xp.matmul(a, b, out=out)

    def open_grid(index, dim):
        """Index arrays selecting x[..., index[i, j, k], ...] at every index position."""
        nd = index.ndim
        return tuple(index if d == dim else
                     xp.arange(n, dtype=I64).reshape([n if i == d else 1 for i in range(nd)])
                     for d, n in enumerate(index.shape))

    def gather(out, x, index, *, dim):
        out[...] = x[open_grid(index, dim)]

    def scatter_(out, index, src, *, dim, reduce):
        _scatter.scatter_(am, values, store, out, index, src, dim=dim, reduce=reduce)

    def nonzero(out, x):
        n = out.shape[0]
        if n == 0 or x.ndim == 0:
            return
        if x.dtype.char == BF16:                 # any bit but the sign: NaN counts, -0 not
            mask = (x & np.uint16(0x7FFF)) != 0
        else:
            mask = x != 0
        mask = mask.ravel()
        rank = xp.cumsum(mask, dtype=I64)
        rows = xp.where(mask, rank - 1, I64.type(n))     # row n: a bin for the zeros
        flat = xp.empty(n + 1, I64)
        flat[rows] = xp.arange(mask.shape[0], dtype=I64)
        lin = flat[:n]
        for d in range(x.ndim - 1, -1, -1):
            xp.remainder(lin, x.shape[d], out=out[:, d])
            lin = lin // x.shape[d]

    def sort_keys(x):
        """Values ordered as the reference orders them: -0.0 equal to 0.0 and every NaN
        positive (thrust's radix sort orders float bits: -0.0 first, negative NaN first)."""
        c = x.dtype.char
        if c == "?":
            return x.astype(np.uint8)
        if c not in _FLOAT:
            return x
        v = values32(x) if c in _LOWP else x
        return xp.where(v != v, v.dtype.type(np.nan), v + v.dtype.type(0))

    def sort(out_values, indices, x, *, dim, descending):
        keys = sort_keys(x)
        if descending:      # stable ascending sort of the reversed data, reversed back
            n = x.shape[dim]
            order = xp.argsort(xp.flip(keys, axis=dim), axis=dim, kind="stable")
            order = I64.type(n - 1) - xp.flip(order, axis=dim)
        else:
            order = xp.argsort(keys, axis=dim, kind="stable")
        indices[...] = order
        out_values[...] = xp.take_along_axis(x, order, axis=dim)

    def before(a, b):
        """a sorts strictly before b, NaN being the largest value."""
        lt = a < b
        if a.dtype.kind == "f":
            lt |= (b != b) & (a == a)
        return lt

    def searchsorted(out, seq, vals, *, right):
        # a binary search of every value at once: log2(M) vectorised steps
        m = seq.shape[1]
        s, v = values32(seq), values32(vals)
        lo = xp.zeros(vals.shape, I64)
        hi = xp.full(vals.shape, m, I64)
        for _ in range(m.bit_length()):
            mid = (lo + hi) >> 1
            probe = xp.take_along_axis(s, xp.minimum(mid, m - 1), axis=1)
            go_right = xp.logical_not(before(v, probe)) if right else before(probe, v)
            go_right &= mid < hi
            lo = xp.where(go_right, mid + 1, lo)
            hi = xp.where(go_right, hi, mid)
        out[...] = lo

    table = {name: unary(getattr(xp, fn)) for name, fn in _UNARY_FLOAT.items()}
    table.update({name: unary(am.special(name)) for name in _SPECIAL})
    table.update({name: binary(getattr(xp, fn)) for name, fn in _BINARY.items()})
    table.update({name: compare(getattr(xp, fn)) for name, fn in _COMPARE.items()})
    table.update({
        "div": div, "fmod": fmod, "bitwise_not": bitwise_not, "where": am.where,
        "sum": reduction(xp.sum), "prod": reduction(xp.prod),
        "amax": extreme(xp.amax), "amin": extreme(xp.amin),
        "argmax": arg(xp.argmax), "argmin": arg(xp.argmin),
        "cumsum": scan(xp.cumsum), "cumprod": scan(xp.cumprod),
        "cummax": running_extreme(xp.maximum), "cummin": running_extreme(xp.minimum),
        "matmul": matmul, "gather": gather, "scatter_": scatter_, "nonzero": nonzero,
        "sort": sort, "searchsorted": searchsorted,
        "relu": relu,
    })
    from ._linalg import build_linalg_kernels      # decompositions and solvers
    table.update(build_linalg_kernels(am))
    from ._fft import build_fft_kernels             # torch.fft's prims
    table.update(build_fft_kernels(am))
    # special functions: cupyx.scipy.special (scipy.special under numpy)
    from dispatchtorch.backend.prims import SPECIAL_BINARY, SPECIAL_UNARY
    table.update({name: unary(am.special(f)) for name, (f, _) in SPECIAL_UNARY.items()})
    gammaln = am.special("gammaln")

    def lgamma(x, out=None, **kw):
        """gammaln, but +inf at -inf as C's lgamma and PyTorch's (scipy's gives -inf)."""
        r = gammaln(x, out=out, **kw)
        if out is None:
            return xp.where(xp.isneginf(x), xp.inf, r).astype(r.dtype, copy=False)
        xp.copyto(out, xp.inf, where=xp.isneginf(x))
        return out
    table["lgamma"] = unary(lgamma)
    table.update({name: binary(xp.nextafter if f == "nextafter" else _computing_in(am.special(f)))
                  for name, (f, _) in SPECIAL_BINARY.items()})

    def airy_ai(x, out=None, dtype=None):
        """cupyx.scipy.special has no Airy function: Ai is computed by scipy on the host
        (one copy each way; docs/backends/cuda.md)."""
        import scipy.special
        r = scipy.special.airy(am.download(x))[0]
        if out is None:
            return am.upload(r.astype(x.dtype))
        out[...] = am.upload(r.astype(out.dtype))
        return out
    table["special_airy_ai"] = unary(airy_ai)
    return table
