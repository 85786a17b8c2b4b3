"""cosine_similarity, pairwise_distance, pdist: vector norms of broadcast inputs."""
from __future__ import annotations

from ... import ops as _ops
from ...ops.norms import vector_norm
from ..._tensor import Tensor


def _norm(x, p, dim, keepdim=False):
    return vector_norm(x, p, dim, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1/max(|x1|, eps) * x2/max(|x2|, eps)) along dim, as ATen computes it."""
    for what, t in (("x1", x1), ("x2", x2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"cosine_similarity(): argument '{what}' must be Tensor, not "
                            f"{type(t).__name__}")
    x1, x2 = _ops.broadcast_tensors(x1, x2)
    n1 = _norm(x1, 2, dim, True).clamp_min(eps)
    n2 = _norm(x2, 2, dim, True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim."""
    for what, t in (("x1", x1), ("x2", x2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"pairwise_distance(): argument '{what}' must be Tensor, not "
                            f"{type(t).__name__}")
    dim = max(x1.dim(), x2.dim(), 1) - 1
    d = x1 - x2 + eps
    if d.dim() == 0:
        d = d.reshape(1)
    return _norm(d, p, dim, keepdim)


def pdist(input, p=2):
    """Distances between every pair of rows i < j (torch.pdist)."""
    return _ops.pdist(input, p)
