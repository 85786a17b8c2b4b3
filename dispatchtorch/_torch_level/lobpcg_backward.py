"""The derivative of lobpcg's k eigenpairs of a symmetric A, ported from PyTorch's
torch/_lobpcg.py (BSD licence): with all m eigenpairs it is eigh's; with k < m the
part orthogonal to them is solved through the characteristic polynomial of the found
eigenvalues evaluated at A, as PyTorch does (so its gradients are PyTorch's)."""
from __future__ import annotations

import math

from .. import linalg
from .. import ops as _ops
from ..ops.random import Generator


def _complete(D_grad, U_grad, A, D, U):
    F = D.unsqueeze(-2) - D.unsqueeze(-1)
    F.diagonal(dim1=-2, dim2=-1).fill_(math.inf)
    F.pow_(-1)
    Ut = U.mT.contiguous()
    return _ops.matmul(U, _ops.matmul(_ops.diag_embed(D_grad) + _ops.matmul(Ut, U_grad) * F, Ut))


def _polynomial_coefficients_given_roots(roots):
    """The coefficients (lowest power first) of prod_i (x - roots_i)."""
    order = roots.shape[-1]
    shape = list(roots.shape)
    shape[-1] += 2
    coeffs = roots.new_zeros(shape)
    coeffs[..., 0] = 1
    coeffs[..., -1] = 1
    for i in range(1, order + 1):
        new = coeffs.clone() if roots.requires_grad else coeffs
        out = new.narrow(-1, order - i, i + 1)
        out -= roots.narrow(-1, i - 1, 1) * coeffs.narrow(-1, order - i + 1, i + 1)
        coeffs = new
    return coeffs.narrow(-1, 1, order + 1)


def _polynomial_value(poly, x, zero_power, transition):
    res = zero_power.clone()
    for k in range(poly.size(-1) - 2, -1, -1):
        res = transition(res, x, poly[..., k])
    return res


def _matrix_polynomial_value(poly, x):
    def transition(value, x, coeff):
        res = x.matmul(value)
        res.diagonal(dim1=-2, dim2=-1).add_(coeff.unsqueeze(-1))
        return res
    n = x.size(-1)
    eye = _ops.eye(n, n, dtype=x.dtype, device=x.device).view(*[1] * (x.dim() - 2), n, n)
    return _polynomial_value(poly, x, eye, transition)


def _vector_polynomial_value(poly, x):
    def transition(value, x, coeff):
        return _ops.addcmul(coeff.unsqueeze(-1), x, value)
    return _polynomial_value(poly, x, x.new_ones(1).expand(x.shape), transition)


def _partial(D_grad, U_grad, A, D, U, largest):
    Ut = U.mT.contiguous()
    proj_U_ortho = -U.matmul(Ut)
    proj_U_ortho.diagonal(dim1=-2, dim2=-1).add_(1)
    gen = Generator(A.device)
    U_ortho = proj_U_ortho.matmul(_ops.randn((*A.shape[:-1], A.size(-1) - D.size(-1)),
                                             dtype=A.dtype, device=A.device, generator=gen))
    U_ortho_t = U_ortho.mT.contiguous()
    chr_poly_D = _polynomial_coefficients_given_roots(D)
    U_grad_projected = U_grad
    series_acc = U_grad_projected.new_zeros(U_grad_projected.shape)
    for k in range(1, chr_poly_D.size(-1)):
        poly_D = _vector_polynomial_value(chr_poly_D[..., k:], D)
        series_acc += U_grad_projected * poly_D.unsqueeze(-2)
        U_grad_projected = A.matmul(U_grad_projected)
    at_A = _matrix_polynomial_value(chr_poly_D, A)
    at_A_to_U_ortho = _ops.matmul(U_ortho_t, _ops.matmul(at_A, U_ortho))
    sign = -1 if largest and k % 2 == 1 else +1
    L = linalg.cholesky(sign * at_A_to_U_ortho)
    res = _complete(D_grad, U_grad, A, D, U)
    res -= U_ortho.matmul(sign * _ops.cholesky_solve(U_ortho_t.matmul(series_acc), L)).matmul(Ut)
    return res


def symeig_backward(D_grad, U_grad, A, D, U, largest):
    if U.size(-1) == U.size(-2):
        return _complete(D_grad, U_grad, A, D, U)
    return _partial(D_grad, U_grad, A, D, U, largest)
