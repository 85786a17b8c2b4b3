"""torch.geqrf (LAPACK's Householder QR in its compact form: R above the diagonal,
the reflectors' tails below, and their scales tau) and torch.ormqr (a matrix times the
Q those reflectors make), written over slices, norms and linalg.householder_product."""
from __future__ import annotations

from .. import _dtype as D
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import creation, memory, pointwise, pointwise_more
from .linalg_more import householder_product
from .norms import vector_norm


def _tensor(x, name, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(x).__name__}")


def geqrf(input, *, out=None):
    """(a, tau): column j's reflector H_j = I - tau_j v v^H with v = (1, a[j+1:, j]),
    chosen as LAPACK's dlarfg / zlarfg (beta = -sign(Re alpha) * ||(alpha, x)||, real) and
    applied as H_j^H to the trailing columns (zgeqr2). PyTorch defines no derivative for
    it; neither do we."""
    _tensor(input, "input", "geqrf")
    if out is not None:
        raise NotImplementedError("geqrf(out=...) is not supported")
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: The input tensor A must have at least 2 dimensions.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex) or \
            input.dtype in (D.float16, D.bfloat16):
        raise RuntimeError(f"geqrf: Expected a floating point or complex tensor as input. Got "
                           f"{input.dtype.pt_name}")
    m, n = input.shape[-2:]
    k = min(m, n)
    cx = input.dtype.is_complex
    with no_grad():
        a = input.clone()
        taus = []
        for j in range(k):
            alpha = a[..., j, j]
            x = a[..., j + 1:, j]
            xnorm = vector_norm(x, dim=-1) if m - j > 1 else \
                creation.zeros_like(alpha, dtype=input.dtype.to_real())
            trivial = (xnorm == 0) & (alpha.imag == 0) if cx else xnorm == 0
            beta = -pointwise_more.PUBLIC["copysign"](
                pointwise.hypot(alpha.abs() if cx else alpha, xnorm), alpha.real if cx else alpha)
            safe = pointwise.where(trivial, 1.0, beta)
            tau = pointwise.where(trivial, 0.0, (beta - alpha) / safe)
            scale = pointwise.where(trivial, 0.0, 1.0 / pointwise.where(trivial, 1.0, alpha - beta))
            v_tail = x * scale.unsqueeze(-1)
            a[..., j + 1:, j] = v_tail
            a[..., j, j] = pointwise.where(trivial, alpha, beta)
            taus.append(tau)
            if j + 1 < n:             # apply H_j to the trailing columns
                v = memory.cat([creation.ones_like(alpha).unsqueeze(-1), v_tail], -1)
                block = a[..., j:, j + 1:]
                w = ((v.conj() if cx else v).unsqueeze(-1) * block).sum(-2)     # v^H block
                t = tau.conj() if cx else tau
                a[..., j:, j + 1:] = block - t[..., None, None] * v.unsqueeze(-1) * \
                    w.unsqueeze(-2)
        tau = memory.stack(taus, -1) if taus else \
            creation.zeros(tuple(input.shape[:-2]) + (0,), dtype=input.dtype, device=input.device)
    from ..return_types import geqrf as _result
    return _result(a, tau)


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """op(Q) @ other (left) or other @ op(Q), Q = H_1 ... H_k from geqrf's (input, tau),
    op = transpose when asked. Differentiable through householder_product."""
    for name, t in (("input", input), ("tau", tau), ("other", other)):
        _tensor(t, name, "ormqr")
    if out is not None:
        raise NotImplementedError("ormqr(out=...) is not supported")
    if input.dim() < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if other.dim() < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    mn = input.shape[-2]
    left_size = other.shape[-2] if left else other.shape[-1]
    k = min(left_size, input.shape[-1])
    if tau.shape[-1] != k:
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape"
                           f"{'[-2]' if left else '[-1]'}, input.shape[-1])")
    if left_size != mn:
        raise RuntimeError(f"torch.ormqr: other.shape{'[-2]' if left else '[-1]'} must be equal "
                           f"to input.shape[-2]")
    # Q (mn x mn): the k reflectors, padded with identity ones (tau = 0)
    batch = tuple(input.shape[:-2])
    v = input[..., :, :k]
    if k < mn:
        v = memory.cat([v, creation.zeros(batch + (mn, mn - k), dtype=input.dtype,
                                    device=input.device)], -1)
        tau = memory.cat([tau, creation.zeros(batch + (mn - k,), dtype=tau.dtype,
                                        device=tau.device)], -1)
    q = householder_product(v, tau) if mn else \
        creation.zeros(batch + (0, 0), dtype=input.dtype, device=input.device)
    if transpose:
        q = q.mH
    return q @ other if left else other @ q


PUBLIC = {"geqrf": geqrf, "ormqr": ormqr}
METHODS = {"geqrf": geqrf, "ormqr": ormqr}
