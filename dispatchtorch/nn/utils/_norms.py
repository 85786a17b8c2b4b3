"""The norms weight and spectral normalisation share."""
from __future__ import annotations


def norm_except_dim(v, pow=2, dim=0):
    """||v|| over every dim but `dim` (kept as size-1 dims); dim=-1: the whole norm."""
    if dim == -1:
        return (v.abs() ** pow).sum() ** (1.0 / pow) if pow != 2 else (v * v).sum().sqrt()
    dims = tuple(d for d in range(v.dim()) if d != dim)
    if pow == 2:
        return (v * v).sum(dims, keepdim=True).sqrt()
    return (v.abs() ** pow).sum(dims, keepdim=True) ** (1.0 / pow)


def weight_norm_value(v, g, dim):
    """torch._weight_norm: v * (g / ||v||), the norm over every dim but `dim`."""
    return v * (g / norm_except_dim(v, 2, dim))


def to_matrix(weight, dim):
    """The weight as a (size of dim, rest) matrix."""
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.dim()) if d != dim))
    return weight.flatten(1)
