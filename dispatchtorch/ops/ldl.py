"""torch.linalg.ldl_factor / ldl_factor_ex / ldl_solve: LAPACK's Bunch-Kaufman LDL^T
(dsytf2 / zsytf2, lower; zhetf2's LDL^H for complex hermitian=True) step for step, so
that LD and the pivots are PyTorch's; and dsytrs's (zsytrs, zhetrs) solve with them. Each matrix of a batch is factored in turn: the pivot choices read a
few scalars per column (a reference path for small matrices; PyTorch defines no
derivative for these)."""
from __future__ import annotations

import math

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import creation

_ALPHA = (1 + math.sqrt(17)) / 8


def _square(A, op):
    if not isinstance(A, Tensor):
        raise TypeError(f"{op}(): argument 'A' must be Tensor, not {type(A).__name__}")
    if A.dim() < 2:
        raise RuntimeError(f"torch.{op}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"torch.{op}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.dtype not in (D.float32, D.float64, D.complex64, D.complex128):
        raise RuntimeError(f"torch.{op}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype.pt_name}")


def _cabs1(z):
    """LAPACK's pivot size: |x| for reals, |Re z| + |Im z| for complex (izamax, zsytf2)."""
    return z.real.abs() + z.imag.abs() if z.dtype.is_complex else z.abs()


def _argmax_abs(v):
    m = _cabs1(v)
    i = int(m.argmax())
    return i, float(m[i])


def _swap(a, i, j):
    """a[i], a[j] = a[j], a[i] for 1-d views."""
    t = a[i].clone()
    a[i] = a[j]
    a[j] = t


class _Kind:
    """What distinguishes dsytf2 / zsytf2 (symmetric) from zhetf2 (Hermitian): the
    conjugations, and a Hermitian matrix's real diagonal."""

    def __init__(self, dtype, hermitian):
        self.herm = bool(hermitian) and dtype.is_complex

    def conj(self, x):
        return x.conj() if self.herm else x

    def diag_size(self, z):
        return float(z.real.abs()) if self.herm else float(_cabs1(z))

    def real_diag(self, a, i):
        if self.herm:
            a[i, i] = a[i, i].real


def _factor_one(a, kind):
    """dsytf2 / zsytf2 / zhetf2 (uplo='L') on the n x n matrix a, in place.
    Returns (pivots, info)."""
    n = a.shape[0]
    cj = kind.conj
    piv = [0] * n
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = kind.diag_size(a[k, k])
        imax, colmax = (k + 1 + _argmax_abs(a[k + 1:, k])[0], 0.0) if k < n - 1 else (k, 0.0)
        if k < n - 1:
            colmax = float(_cabs1(a[imax, k]))
        if max(absakk, colmax) == 0:
            info = info or k + 1
            kp = k
            kind.real_diag(a, k)
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                j, rowmax = _argmax_abs(a[imax, k:imax])
                if imax < n - 1:
                    rowmax = max(rowmax, _argmax_abs(a[imax + 1:, imax])[1])
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif kind.diag_size(a[imax, imax]) >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:              # interchange rows and columns kk and kp of A[k:, k:]
                if kp < n - 1:
                    t = a[kp + 1:, kk].clone()
                    a[kp + 1:, kk] = a[kp + 1:, kp]
                    a[kp + 1:, kp] = t
                if kp - kk > 1:
                    t = cj(a[kk + 1:kp, kk].clone())
                    a[kk + 1:kp, kk] = cj(a[kp, kk + 1:kp])
                    a[kp, kk + 1:kp] = t
                if kind.herm:
                    a[kp, kk] = a[kp, kk].conj()
                t = a[kk, kk].clone()
                a[kk, kk] = a[kp, kp]
                a[kp, kp] = t
                kind.real_diag(a, kk)
                kind.real_diag(a, kp)
                if kstep == 2:
                    kind.real_diag(a, k)
                    t = a[k + 1, k].clone()
                    a[k + 1, k] = a[kp, k]
                    a[kp, k] = t
            else:
                kind.real_diag(a, k)
                if kstep == 2:
                    kind.real_diag(a, k + 1)
            if kstep == 1:
                if k < n - 1:
                    r1 = 1.0 / (a[k, k].real if kind.herm else a[k, k])
                    col = a[k + 1:, k]
                    a[k + 1:, k + 1:] = (a[k + 1:, k + 1:] - r1 * col.unsqueeze(1) *
                                         cj(col).unsqueeze(0)).tril() + a[k + 1:, k + 1:].triu(1)
                    a[k + 1:, k] = col * r1
            elif k < n - 2 and kind.herm:      # zhetf2's 2 x 2 update
                d = a[k + 1, k].abs()
                d11 = a[k + 1, k + 1].real / d
                d22 = a[k, k].real / d
                tt = 1.0 / (d11 * d22 - 1.0)
                d21 = a[k + 1, k] / d
                d = tt / d
                c0, c1 = a[k + 2:, k].clone(), a[k + 2:, k + 1].clone()
                wk = d * (d11 * c0 - d21 * c1)
                wkp1 = d * (d22 * c1 - d21.conj() * c0)
                upd = a[k + 2:, k + 2:] - (c0.unsqueeze(1) * wk.conj().unsqueeze(0) +
                                           c1.unsqueeze(1) * wkp1.conj().unsqueeze(0))
                a[k + 2:, k + 2:] = upd.tril() + a[k + 2:, k + 2:].triu(1)
                a[k + 2:, k] = wk
                a[k + 2:, k + 1] = wkp1
                for j in range(k + 2, n):
                    kind.real_diag(a, j)
            elif k < n - 2:
                d21 = a[k + 1, k]
                d11 = a[k + 1, k + 1] / d21
                d22 = a[k, k] / d21
                t = 1.0 / (d11 * d22 - 1.0)
                d21 = t / d21
                c0, c1 = a[k + 2:, k].clone(), a[k + 2:, k + 1].clone()
                wk = d21 * (d11 * c0 - c1)
                wkp1 = d21 * (d22 * c1 - c0)
                upd = a[k + 2:, k + 2:] - (c0.unsqueeze(1) * wk.unsqueeze(0) +
                                           c1.unsqueeze(1) * wkp1.unsqueeze(0))
                a[k + 2:, k + 2:] = upd.tril() + a[k + 2:, k + 2:].triu(1)
                a[k + 2:, k] = wk
                a[k + 2:, k + 1] = wkp1
        if kstep == 1:
            piv[k] = kp + 1
        else:
            piv[k] = piv[k + 1] = -(kp + 1)
        k += kstep
    return piv, info


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """(LD, pivots, info): L's strict lower part and D's 1x1 / 2x2 blocks in LD (lower
    triangle), LAPACK's 1-based pivots (negative for a 2x2 block)."""
    _square(A, "linalg.ldl_factor_ex")
    if out is not None:
        raise NotImplementedError("linalg.ldl_factor_ex(out=...) is not supported")
    batch, n = tuple(A.shape[:-2]), A.shape[-1]
    with no_grad():
        flat = A.reshape((math.prod(batch), n, n)).clone()
        kind = _Kind(A.dtype, hermitian)
        pivs, infos = [], []
        for b in range(flat.shape[0]):
            p, i = _factor_one(flat[b], kind)
            pivs.append(p)
            infos.append(i)
        LD = flat.tril().reshape(batch + (n, n))
        pivots = creation.tensor(pivs, dtype=D.int32, device=A.device).reshape(batch + (n,))
        info = creation.tensor(infos, dtype=D.int32, device=A.device).reshape(batch)
    if check_errors and any(infos):
        raise RuntimeError(f"torch.linalg.ldl_factor_ex: The factorization could not be "
                           f"completed because the input is not invertible (info = "
                           f"{max(infos)}).")
    from ..return_types import ldl_factor_ex as _result
    return _result(LD, pivots, info)


def ldl_factor(A, *, hermitian=False, out=None):
    LD, pivots, _ = ldl_factor_ex(A, hermitian=hermitian)
    from ..return_types import ldl_factor as _result
    return _result(LD, pivots)


def _solve_one(a, piv, x, kind):
    """dsytrs / zsytrs / zhetrs (uplo='L'): x <- A^-1 x for one factored matrix, in place."""
    n = a.shape[0]
    cj = kind.conj
    k = 0
    while k < n:                      # L D y = P b
        if piv[k] > 0:
            kp = piv[k] - 1
            if kp != k:
                _swap(x, k, kp)
            if k < n - 1:
                x[k + 1:] = x[k + 1:] - a[k + 1:, k].unsqueeze(1) * x[k].unsqueeze(0)
            x[k] = x[k] / (a[k, k].real if kind.herm else a[k, k])
            k += 1
        else:
            kp = -piv[k] - 1
            if kp != k + 1:
                _swap(x, k + 1, kp)
            if k < n - 2:
                x[k + 2:] = x[k + 2:] - a[k + 2:, k].unsqueeze(1) * x[k].unsqueeze(0) - \
                    a[k + 2:, k + 1].unsqueeze(1) * x[k + 1].unsqueeze(0)
            akm1k = a[k + 1, k]
            akm1, ak = a[k, k] / cj(akm1k), a[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1.0
            bkm1, bk = x[k] / cj(akm1k), x[k + 1] / akm1k
            x[k] = (ak * bkm1 - bk) / denom
            x[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:                     # L^T x = y (L^H when Hermitian), then P^T
        if piv[k] > 0:
            if k < n - 1:
                x[k] = x[k] - (cj(a[k + 1:, k]).unsqueeze(1) * x[k + 1:]).sum(0)
            kp = piv[k] - 1
            if kp != k:
                _swap(x, k, kp)
            k -= 1
        else:
            if k < n - 1:
                x[k] = x[k] - (cj(a[k + 1:, k]).unsqueeze(1) * x[k + 1:]).sum(0)
                x[k - 1] = x[k - 1] - (cj(a[k + 1:, k - 1]).unsqueeze(1) * x[k + 1:]).sum(0)
            kp = -piv[k] - 1
            if kp != k:
                _swap(x, k, kp)
            k -= 2


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """X with A X = B, A given by ldl_factor's (LD, pivots); batches broadcast."""
    for name, t in (("LD", LD), ("pivots", pivots), ("B", B)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linalg.ldl_solve(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    if out is not None:
        raise NotImplementedError("linalg.ldl_solve(out=...) is not supported")
    _square(LD, "linalg.ldl_solve")
    if B.dim() < 2:
        raise RuntimeError("torch.linalg.ldl_solve: Expected B to have at least 2 dimensions, "
                           f"but it has {B.dim()} dimensions instead")
    if pivots.dtype is not D.int32:
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected pivots to be integers. Got "
                           f"{pivots.dtype.pt_name}")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"torch.linalg.ldl_solve: Incompatible shapes of A and B for the "
                           f"equation AX = B ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    from .._shape import broadcast_shapes
    batch = tuple(broadcast_shapes(tuple(LD.shape[:-2]), tuple(B.shape[:-2])))
    with no_grad():
        count = math.prod(batch)
        a = LD.expand(batch + (n, n)).reshape((count, n, n))
        p = pivots.expand(batch + (n,)).reshape((count, n))
        x = B.to(LD.dtype).expand(batch + tuple(B.shape[-2:]))
        x = x.reshape((count,) + tuple(B.shape[-2:])).clone()
        kind = _Kind(LD.dtype, hermitian)
        for b in range(x.shape[0]):
            _solve_one(a[b], [int(v) for v in p[b].tolist()], x[b], kind)
    return x.reshape(batch + tuple(B.shape[-2:]))


LINALG = {"ldl_factor": ldl_factor, "ldl_factor_ex": ldl_factor_ex, "ldl_solve": ldl_solve}
