"""The maps of parametrizations.orthogonal, as composites of matmuls (so their
gradients come from matmul's): the matrix exponential of a skew-symmetric matrix,
LAPACK's Householder product, and the QR step that picks the trivialization base."""
from __future__ import annotations

import math

import numpy as np

from ... import ops as _ops


def matrix_exp(a):
    """exp(a) by scaling and squaring with a degree-18 Taylor polynomial (error below
    float64 rounding once the scaled norm is under 1/2)."""
    norm = float(a.detach().abs().sum(-2).amax().item()) if a.numel() else 0.0
    s = max(0, int(math.ceil(math.log2(norm))) + 1) if norm > 0.5 else 0
    b = a / (2 ** s)
    eye = _ops.eye(a.shape[-1], dtype=a.dtype, device=a.device)
    term, total = eye, eye
    for k in range(1, 19):
        term = (term @ b) / k
        total = total + term
    for _ in range(s):
        total = total @ total
    return total


def householder_product(a, tau):
    """The first k columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i the i-th column
    of a below the diagonal with a 1 on it (torch.linalg.householder_product)."""
    n, k = a.shape[-2], a.shape[-1]
    rows = _ops.arange(n, device=a.device).reshape(n, 1)
    q = _ops.eye(n, dtype=a.dtype, device=a.device)[:, :k].expand(a.shape).contiguous()
    for i in range(k - 1, -1, -1):
        col = a[..., :, i:i + 1]
        v = _ops.where(rows > i, col, _ops.where(rows == i, 1.0, 0.0))
        q = q - tau[..., i:i + 1].unsqueeze(-1) * (v @ (v.transpose(-2, -1) @ q))
    return q


def make_orthogonal(a):
    """The Q of a = QR with R's diagonal made non-negative (unique for full rank), as
    PyTorch's geqrf + householder_product + sign fix; computed on the host."""
    x = a.detach().cpu().numpy().astype(np.float64)
    q, r = np.linalg.qr(x)
    sign = np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]
    return _ops.tensor((q * sign).astype(x.dtype), dtype=a.dtype, device=a.device)


def is_orthogonal(q):
    n, k = q.shape[-2], q.shape[-1]
    eye = _ops.eye(k, dtype=q.dtype, device=q.device)
    from ... import _dtype as D
    eps = 10.0 * n * D.finfo(q.dtype).eps
    return bool(((q.transpose(-2, -1) @ q - eye).abs() <= eps).all().item())
