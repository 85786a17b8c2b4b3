"""Deliberately broken copies of the CPU backend, one bug each, of the kinds real
backends have; the suite must catch each and attribute it to the right prim. Plus a
faithful copy (must pass with no false alarm) and a backend with no kernels at all
(everything falls back: "prims on device 0/67").

Each backend is the CPU backend (numpy memory) under another name, with one kernel
replaced. BROKEN maps the backend name to (the prim it breaks, a description).
"""
import numpy as np
from dispatchtorch.backend import hookimpl
from dispatchtorch_cpu.backend import CPUBackend
from dispatchtorch_cpu.kernels import KERNELS

K = KERNELS


def naive_expm1(out, x):
    """exp(x) - 1: every digit lost near 0 (expm1(1e-30) = 0)."""
    f = x.astype(np.float32) if x.dtype.itemsize == 2 else x
    out[...] = np.exp(f) - 1


def mul_flush_to_zero(out, a, b):
    """Subnormal results flushed to zero (a device running with FTZ/DAZ)."""
    K["mul"](out, a, b)
    if out.dtype.kind == "f" or out.dtype.name == "bfloat16":
        tiny = np.finfo(np.float32).tiny if out.dtype.name == "bfloat16" else np.finfo(out.dtype).tiny
        out[np.abs(out.astype(np.float64)) < tiny] = 0


def neg_as_zero_minus(out, x):
    """0 - x: neg(+0.0) is +0.0, where -(+0.0) is -0.0."""
    if x.dtype.kind == "f" or x.dtype.name == "bfloat16":
        out[...] = (np.zeros((), np.float32) - x.astype(np.float32)).astype(out.dtype)
    else:
        K["neg"](out, x)


def sum_half_accumulator(out, x, *, dims, keepdim):
    """Half precision summed in half precision (no float32 accumulator)."""
    if x.dtype.itemsize == 2 and x.dtype.kind != "i" and x.dtype.kind != "u":
        acc = x.dtype
        r = x.copy()
        for d in sorted(dims if dims else range(x.ndim), reverse=True):
            r = np.add.reduce(r, axis=d, dtype=acc, keepdims=True)
        out[...] = r.reshape(out.shape) if not keepdim else r
        return
    K["sum"](out, x, dims=dims, keepdim=keepdim)


def sum_int32_accumulator(out, x, *, dims, keepdim):
    """64-bit integer sums accumulated in 32 bits (wrapping)."""
    if out.dtype == np.int64:
        r = np.add.reduce(x.astype(np.int32), axis=dims or None, dtype=np.int32, keepdims=keepdim)
        out[...] = np.asarray(r).astype(np.int64)
        return
    K["sum"](out, x, dims=dims, keepdim=keepdim)


def abs_last_dim_contiguous(out, x):
    """Rank >= 3 inputs read as if their last dim were contiguous (the stride of the
    last dim ignored): a layout bug only a non-contiguous input of rank 3+ shows."""
    if x.ndim >= 3 and x.strides[-1] > x.itemsize:
        x = np.lib.stride_tricks.as_strided(x, x.shape, x.strides[:-1] + (x.itemsize,))
    K["abs"](out, x)


def matmul_tile_edge(out, a, b):
    """Output columns in tiles of 16: a last tile of width 1 (N = 17, 33, 65, ...) is
    never written (an off-by-one in the tile loop's bound)."""
    K["matmul"](out, a, b)
    n = out.shape[-1]
    if n > 16 and n % 16 == 1:
        out[..., n - 1] = 0


def scatter_drops_last(out, index, src, *, dim, reduce):
    """The last index along `dim` is never scattered (a loop bound off by one)."""
    if index.ndim and index.shape[dim] > 1:
        sl = [slice(None)] * index.ndim
        sl[dim] = slice(0, index.shape[dim] - 1)
        index = index[tuple(sl)]
        if getattr(src, "ndim", 0) == len(sl):
            src = src[tuple(sl)]
    K["scatter_"](out, index, src, dim=dim, reduce=reduce)


BROKEN = {
    "b_expm1": ("expm1", naive_expm1, "naive expm1 (exp(x) - 1)"),
    "b_ftz": ("mul", mul_flush_to_zero, "mul flushes subnormal results to zero"),
    "b_zerosign": ("neg", neg_as_zero_minus, "neg computed as 0 - x (sign of zero)"),
    "b_halfsum": ("sum", sum_half_accumulator, "sum of half precision in half precision"),
    "b_int32sum": ("sum", sum_int32_accumulator, "int64 sum in an int32 accumulator"),
    "b_layout": ("abs", abs_last_dim_contiguous, "rank-3+ strided inputs read contiguously"),
    "b_tile": ("matmul", matmul_tile_edge, "matmul misses the last column at N = 16k + 1"),
    "b_scatter": ("scatter_", scatter_drops_last, "scatter_ skips the last index"),
}


def _backend(name, kernels):
    return type(f"Backend_{name}", (CPUBackend,), {"name": name, "kernels": kernels})()


def _make(name):
    prim, fn, _ = BROKEN[name]

    @hookimpl
    def dispatchtorch_backend():
        return _backend(name, {**KERNELS, prim: fn})
    return dispatchtorch_backend


class _Plugin:
    def __init__(self, hook):
        self.dispatchtorch_backend = hook


PLUGINS = {name: _Plugin(_make(name)) for name in BROKEN}
PLUGINS["faithful"] = _Plugin(hookimpl(lambda: _backend("faithful", dict(KERNELS))))
PLUGINS["nokernels"] = _Plugin(hookimpl(lambda: _backend("nokernels", {})))
# entry points name module attributes: `b_expm1 = dtc_fixture_broken:plugin_b_expm1`
globals().update({f"plugin_{name}": p for name, p in PLUGINS.items()})
NAMES = tuple(PLUGINS)
