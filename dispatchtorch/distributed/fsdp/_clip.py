"""FSDP's clip_grad_norm_: the norm over every rank's gradient shards (the sharded ones'
p-th powers summed over the ranks, or their max for inf), then each gradient scaled by
max_norm / (norm + 1e-6) where that is below 1, as PyTorch."""
from __future__ import annotations

import math

from ... import distributed as dist
from ... import ops as _ops
from ...autograd.grad_mode import no_grad


def _wide(g):
    g = g.detach()
    return g.float() if g.element_size() < 4 else g      # half precision sums in float32


def _local(grads, p):
    if not grads:
        return _ops.zeros(())
    if p == math.inf:
        return _ops.stack([_wide(g).abs().max() for g in grads]).max()
    return sum((_wide(g).abs() ** p).sum() for g in grads)


def clip_grad_norm(params, sharded_ids, max_norm, norm_type, group):
    p = float(norm_type)
    if not p > 0:
        raise ValueError(f"clip_grad_norm_: norm_type must be positive, got {norm_type}")
    with no_grad():
        grads = [(id(q) in sharded_ids, q.grad) for q in params if q.grad is not None]
        sharded = _local([g for s, g in grads if s], p).reshape(1).clone()
        local = _local([g for s, g in grads if not s], p)
        dist.all_reduce(sharded, op=dist.ReduceOp.MAX if p == math.inf else dist.ReduceOp.SUM,
                        group=group)
        sharded = sharded.reshape(())
        if p == math.inf:
            total = _ops.maximum(sharded, local)
        else:
            total = (sharded + local) ** (1.0 / p)
        coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
        for _, g in grads:
            g.mul_(coef.to(g.dtype))
    if grads:
        return total.to(grads[0][1].dtype)
    return total
