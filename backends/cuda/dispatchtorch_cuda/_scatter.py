"""scatter_ with the reference's semantics on a GPU, where writes race.

- 'none': the last write (in C order of index) wins, deterministically: an atomic max
  finds each target's last writer, then every writer stores that writer's value.
- 'sum', 'amax', 'amin': CUDA atomics through `ufunc.at`, only on the dtypes cupy's
  atomics take (int32/uint32/uint64/float32/float64 for add; int32/uint32/uint64 for
  max/min). Other dtypes accumulate in a wider copy; max/min go through
  order-preserving unsigned keys (cupy's float atomicMax ignores NaN and its
  float64 one rounds through float32), with NaN restored afterwards.
- 'prod' (no atomic multiply): a stable sort by target, then each run multiplied into
  its target in index order (one thread per run), the reference's exact rounding.

Nothing is written to `out` until every temporary is allocated, so running out of
memory leaves it as it was.
"""
from __future__ import annotations

import numpy as np

from ._bf16 import CHAR as BF16

I32, I64, U32, U64 = (np.dtype(t) for t in (np.int32, np.int64, np.uint32, np.uint64))
F32, F64 = np.dtype(np.float32), np.dtype(np.float64)

_ATOMIC = {"add": {F32, F64, I32, U32, U64}, "maximum": {I32, U32, U64},
           "minimum": {I32, U32, U64}}
_WIDEN = frozenset("?bBh")                      # accumulate in int32
_LOWP = frozenset("eH")                         # accumulate in float32
_SIGN = {U32: np.uint32(1 << 31), U64: np.uint64(1 << 63)}
_UNSIGNED = {4: U32, 8: U64}


def accumulator(dtype, reduce):
    c = dtype.char
    if c in _LOWP:
        return F32
    if c in _WIDEN and reduce in ("sum", "amax", "amin"):
        return I32
    return dtype


def targets(xp, index, dim, shape):
    """C-order flat positions in an array of `shape` that each index element names."""
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    t = index.astype(I64) * I64.type(strides[dim])
    ndim = index.ndim
    for d, n in enumerate(index.shape):
        if d != dim and n > 1:
            step = xp.arange(n, dtype=I64) * I64.type(strides[d])
            t = t + step.reshape([n if i == d else 1 for i in range(ndim)])
    return t.ravel()


def at(xp, name, a, idx, v):
    """`ufunc.at` restricted to the dtypes CUDA atomics support (checked on numpy too)."""
    if a.dtype not in _ATOMIC[name]:
        raise TypeError(f"internal: no {name} atomic for {a.dtype}")
    getattr(xp, name).at(a, idx, v)


def _sortable_key(xp, a):
    """Unsigned integers ordered as a's values (NaN excluded): a float's bits with
    the sign bit set when positive and all bits flipped when negative; an int's
    bits with the sign bit flipped."""
    u_dt = _UNSIGNED[a.dtype.itemsize]
    sign = _SIGN[u_dt]
    u = a.view(u_dt)
    if a.dtype.kind == "f":
        return xp.where(u >= sign, ~u, u | sign)
    return u ^ sign


def _from_key(xp, key, dtype):
    sign = _SIGN[key.dtype]
    if dtype.kind == "f":
        bits = xp.where(key >= sign, key ^ sign, ~key)
    else:
        bits = key ^ sign
    return bits.view(dtype)


def scatter_(am, values, store, out, index, src, *, dim, reduce):
    """`values(x)` widens bfloat16 to float32; `store(out, r)` writes back with a cast."""
    xp = am.xp
    if index.size == 0:
        return
    t = targets(xp, index, dim, out.shape)
    if reduce == "none":
        return _assign_last(xp, out, t, src.ravel())
    acc_dt = accumulator(out.dtype, reduce)
    direct = acc_dt == out.dtype and out.flags.c_contiguous
    acc = out if direct else xp.ascontiguousarray(values(out), dtype=acc_dt)
    flat = acc.reshape(-1)
    v = xp.ascontiguousarray(values(src).ravel(), dtype=acc_dt)
    if reduce == "sum":
        if acc_dt.kind != "f" and acc_dt.itemsize == 8:
            at(xp, "add", flat.view(U64), t, v.view(U64))     # two's complement: same bits
        else:
            at(xp, "add", flat, t, v)
    elif reduce in ("amax", "amin"):
        _extreme(xp, "maximum" if reduce == "amax" else "minimum", flat, t, v)
    elif reduce == "prod":
        _product(am, flat, t, v)
    else:
        raise ValueError(f"scatter_: unknown reduce {reduce!r}")
    if not direct:
        store(out, acc)


def _assign_last(xp, out, t, v):
    acc = out if out.flags.c_contiguous else xp.ascontiguousarray(out)
    flat = acc.reshape(-1)
    last = xp.zeros(flat.shape[0], U64)
    at(xp, "maximum", last, t, xp.arange(t.shape[0], dtype=U64))
    flat[t] = v[last[t].astype(I64)]          # every writer of a target stores the same value
    if acc is not out:
        xp.copyto(out, acc)


def _extreme(xp, name, flat, t, v):
    is_float = flat.dtype.kind == "f"
    key = _sortable_key(xp, flat)
    at(xp, name, key, t, _sortable_key(xp, v))
    result = _from_key(xp, key, flat.dtype)
    if is_float:                               # NaN wins, wherever it came from
        nan = (flat != flat).astype(I32)
        at(xp, "maximum", nan, t, (v != v).astype(I32))
        xp.copyto(result, flat.dtype.type(np.nan), where=nan.astype(bool))
    xp.copyto(flat, result)


def _product(am, flat, t, v):
    order = am.xp.argsort(t, kind="stable")     # runs of equal targets, in C order
    am.run_product(flat, t[order], v[order])
