"""weight_norm, spectral_norm and orthogonal as parametrizations (PyTorch's
torch.nn.utils.parametrizations)."""
from __future__ import annotations

from ... import ops as _ops
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.module import Module
from . import parametrize
from ._norms import norm_except_dim, to_matrix, weight_norm_value
from .spectral_norm import _default_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_norm_value(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Parametrize `name` as g * v / ||v|| (original0 = g, original1 = v); old
    checkpoints with `<name>_g` / `<name>_v` keys load into it."""
    wn = _WeightNorm(dim)
    parametrize.register_parametrization(module, name, wn, unsafe=True)

    def compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                    error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)
    module._register_load_state_dict_pre_hook(compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, "
                             f"{ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = to_matrix(weight, self.dim)
            h, w = mat.shape
            u = _ops.empty(h, dtype=mat.dtype, device=mat.device).normal_(0, 1)
            v = _ops.empty(w, dtype=mat.dtype, device=mat.device).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(mat, 15)

    def _power_method(self, mat, n):
        with no_grad():
            mat = mat.detach()
            for _ in range(n):
                self._u.copy_(F.normalize(mat @ self._v, dim=0, eps=self.eps))
                self._v.copy_(F.normalize(mat.T @ self._u, dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = to_matrix(weight, self.dim)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        return weight / (u * (mat @ v)).sum()

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _default_dim(module)
    parametrize.register_parametrization(module, name,
                                         _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


class _Orthogonal(Module):
    """weight = base @ f(X), f the matrix exponential of X's skew part or a Householder
    product (PyTorch's _Orthogonal with use_trivialization=True)."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        from ._orthogonal_maps import householder_product, matrix_exp
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.transpose(-2, -1)
            n, k = k, n
        if self.orthogonal_map == "matrix_exp":
            X = X.tril()
            if n != k:
                X = _ops.cat([X, _ops.zeros(tuple(X.shape[:-2]) + (n, n - k), dtype=X.dtype,
                                            device=X.device)], -1)
            Q = matrix_exp(X - X.transpose(-2, -1))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            Q = householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if self.__dict__["_buffers"].get("base", False) is not False:
            Q = self.base @ Q
        if transposed:
            Q = Q.transpose(-2, -1)
        return Q

    def right_inverse(self, Q):
        from ._orthogonal_maps import is_orthogonal, make_orthogonal
        if tuple(Q.shape) != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {tuple(Q.shape)}.")
        with no_grad():
            q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            if n < k:
                Q = Q.transpose(-2, -1)
                n, k = k, n
            if n == k:
                Q = Q.clone() if is_orthogonal(Q) else make_orthogonal(Q)
            else:
                N = _ops.randn(tuple(Q.shape[:-2]) + (n, n - k), dtype=Q.dtype,
                               device=Q.device)
                Q = make_orthogonal(_ops.cat([Q, N], -1))
            self.base = Q
            neg_id = _ops.zeros_like(q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Parametrize `name` as an orthogonal matrix (or batch of them). The maps
    "matrix_exp" and "householder" are provided; "cayley" and use_trivialization=False
    are not."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.dim()} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in ("matrix_exp", "cayley", "householder"):
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    if orthogonal_map == "cayley":
        raise NotImplementedError("orthogonal(orthogonal_map='cayley') needs linalg.solve, "
                                  "which is not in the op set")
    if not use_trivialization:
        raise NotImplementedError("orthogonal(use_trivialization=False) needs geqrf, which is "
                                  "not in the op set")
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
