"""The array module the kernels run on: cupy on a GPU, numpy in the CPU-only tests.

Every prim is written once against the numpy API (`am.xp`). This file holds what
differs between the two modules: views over raw memory, host transfers, raw
pointers, the special functions, and the fused cupy kernels that have an xp-op twin.
"""
from __future__ import annotations

import warnings

import numpy as np

from . import _bf16

# Under numpy, IEEE results such as log(0) = -inf come with RuntimeWarnings; they are
# the semantics, so keep the ones our kernels trigger out of the user's console.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"dispatchtorch_cuda(\.|$)")


class ArrayModule:
    name = ""
    xp = None
    # cupy's float16 matmul accumulates in float32 on cuBLAS; numpy's does not
    native_half_matmul = False

    def special(self, name):
        """erf / erfc / erfinv as a ufunc (imported on first use: scipy is slow to load)."""
        fn = []

        def call(*args, **kwargs):
            if not fn:
                fn.append(self._load_special(name))
            return fn[0](*args, **kwargs)
        return call

    def bf16_to_f32(self, bits):
        return _bf16.to_f32(self.xp, bits)

    def f32_to_bf16(self, values, out):
        """Round float values into the bfloat16 handle `out` (any layout)."""
        self.xp.copyto(out, _bf16.from_f32(self.xp, values))

    def same_memory(self, p, q):
        return p is q or (p.strides == q.strides and self.ptr(p) == self.ptr(q))

    def where(self, out, cond, a, b):
        """out = cond ? a : b, where out may be a or b (same layout)."""
        xp = self.xp
        if self.same_memory(out, a):             # in place on a: only b's places change
            xp.copyto(out, b, where=xp.logical_not(cond))
            return
        if not self.same_memory(out, b):
            xp.copyto(out, b)
        xp.copyto(out, a, where=cond)

    def relu(self, out, x):
        """out = x <= 0 ? 0 : x (float32, float64; NaN passes through)."""
        self.where(out, x <= 0, self.xp.zeros((), x.dtype), x)

    def run_product(self, flat, ts, vs):
        """flat[ts[i]] *= vs[i] in order, ts sorted (stable): the reference's rounding."""
        self.xp.multiply.at(flat, ts, vs)


class NumpyModule(ArrayModule):
    """numpy standing in for cupy, so the kernels' logic is tested without a GPU."""
    name = "numpy"
    xp = np

    def lu_factor(self, a):
        from scipy.linalg import lapack
        getrf, = lapack.get_lapack_funcs(("getrf",), (a,))
        lu, piv, _ = getrf(np.array(a, copy=True))
        return lu, piv

    def trsm(self, a, b, *, lower, unit, left):
        from scipy.linalg import blas
        trsm, = blas.get_blas_funcs(("trsm",), (a, b))
        with np.errstate(all="ignore"):
            return trsm(1.0, a, b, side=0 if left else 1, lower=lower, diag=int(bool(unit)))

    def _load_special(self, name):
        import scipy.special
        return getattr(scipy.special, name)

    def ptr(self, a):
        return a.__array_interface__["data"][0]

    def view(self, storage, shape, strides, offset):
        item = storage.itemsize
        if 0 in shape:
            offset = 0          # an empty view reads nothing; its offset may lie past the end
        return np.ndarray(shape, storage.dtype, storage, offset * item,
                          tuple(s * item for s in strides))

    def upload(self, array):
        return np.array(array, order="C", copy=True)

    def download(self, handle):
        return np.array(handle, order="C", copy=True)

    def device_of(self, handle):
        return 0


class CupyModule(ArrayModule):
    name = "cupy"
    native_half_matmul = True

    def __init__(self):
        import cupy
        from . import _fused
        self.xp = cupy
        self._fused = _fused

    def _load_special(self, name):
        import cupyx.scipy.special
        return getattr(cupyx.scipy.special, name)

    def lu_factor(self, a):
        import cupyx.scipy.linalg
        return cupyx.scipy.linalg.lu_factor(a, check_finite=False)

    def trsm(self, a, b, *, lower, unit, left):
        """cuBLAS trsm through cupyx (a zero pivot divides by zero, as on the CPU)."""
        import cupyx.scipy.linalg
        if left:
            return cupyx.scipy.linalg.solve_triangular(a, b, lower=lower, unit_diagonal=unit,
                                                       check_finite=False)
        # X A = B  <=>  A^T X^T = B^T
        return cupyx.scipy.linalg.solve_triangular(a, b.T, trans="T", lower=lower,
                                                   unit_diagonal=unit, check_finite=False).T

    def ptr(self, a):
        return a.data.ptr

    def view(self, storage, shape, strides, offset):
        item = storage.itemsize
        if 0 in shape:
            offset = 0
        return self.xp.ndarray(shape, storage.dtype, storage.data + offset * item,
                               tuple(s * item for s in strides))

    def upload(self, array):
        return self.xp.asarray(array)

    def download(self, handle):
        return self.xp.asnumpy(handle)          # synchronises the stream

    def device_of(self, handle):
        return handle.data.device_id

    def bf16_to_f32(self, bits):
        return self._fused.bf16_to_f32(bits)

    def f32_to_bf16(self, values, out):
        xp = self.xp
        if not (isinstance(values, xp.ndarray) and values.dtype == xp.float32):
            values = xp.asarray(values, dtype=xp.float32)
        self._fused.f32_to_bf16(values, out)

    def where(self, out, cond, a, b):
        self._fused.where(cond, a, b, out)

    def relu(self, out, x):
        self._fused.relu(x, out)

    def run_product(self, flat, ts, vs):
        self._fused.run_product(ts, vs, ts.shape[0], flat, size=ts.shape[0])   # count, out
