"""Likelihood losses: Poisson and Gaussian negative log-likelihood, and CTC."""
from __future__ import annotations

import math

from ... import _dtype as D
from ... import ops as _ops
from ..._tensor import Tensor
from ._loss import _reduce, legacy_reduction


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        safe = _ops.where(target > 1, target, 2.0)
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + _ops.where(target > 1, stirling, 0.0)
    return _reduce(loss, reduction, "poisson_nll_loss")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _ops.full(input.shape, float(var), dtype=input.dtype, device=input.device)
    elif bool((var < 0).any().item()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and
                  sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var + (var.clamp_min(eps) - var).detach()     # clamped value, identity gradient
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction, "gaussian_nll_loss")


_NEG = -1e30        # log(0) kept finite so unreachable states get zero gradient, never nan


def _lengths(x, n, device):
    if isinstance(x, Tensor):
        return [int(v) for v in x.reshape(-1).tolist()]
    return [int(v) for v in x]


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist temporal classification: the forward (alpha) recursion in log
    space over the blank-extended targets, every batch entry at once. Its gradient is
    the true derivative of the loss; PyTorch's kernel returns exp(log_probs) minus the
    alignment posteriors instead, which agrees once chained through log_softmax."""
    if not isinstance(log_probs, Tensor) or log_probs.dim() not in (2, 3):
        raise RuntimeError("ctc_loss: log_probs must be a 2-D (T, C) or 3-D (T, N, C) tensor")
    unbatched = log_probs.dim() == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    steps, n, c = lp.shape
    in_len = _lengths(input_lengths, n, lp.device)
    tg_len = _lengths(target_lengths, n, lp.device)
    if len(in_len) != n or len(tg_len) != n:
        raise RuntimeError(f"ctc_loss: expected input_lengths and target_lengths of size {n}")
    if any(t > steps for t in in_len):
        raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got "
                           f"value {max(in_len)}")
    flat = targets.reshape(-1).tolist() if targets.dim() == 1 or unbatched else None
    rows, pos = [], 0
    for b in range(n):
        if flat is not None and (targets.dim() == 1):
            rows.append(flat[pos:pos + tg_len[b]])
            pos += tg_len[b]
        else:
            row = targets.reshape(n, -1)[b].tolist() if not unbatched else targets.tolist()
            rows.append(row[:tg_len[b]])
    s_max = max([len(r) for r in rows] + [0])
    width = 2 * s_max + 1
    ext = [[blank] * width for _ in range(n)]
    skip = [[False] * width for _ in range(n)]
    for b, r in enumerate(rows):
        for i, label in enumerate(r):
            ext[b][2 * i + 1] = label
            if i > 0 and label != r[i - 1]:
                skip[b][2 * i + 1] = True
    dev = lp.device
    ext_t = _ops.tensor(ext, dtype=D.int64, device=dev)                   # (N, W)
    skip_t = _ops.tensor(skip, dtype=D.bool_, device=dev)
    emit = lp.gather(2, ext_t.unsqueeze(0).expand(steps, n, width))       # (T, N, W)
    neg = _ops.full((n, 2), _NEG, dtype=lp.dtype, device=dev)
    start = _ops.arange(width, device=dev) < 2
    alpha = _ops.where(start, emit[0], _NEG)
    for t in range(1, steps):
        prev1 = _ops.cat([neg[:, :1], alpha[:, :-1]], 1)
        prev2 = _ops.where(skip_t, _ops.cat([neg, alpha[:, :-2]], 1), _NEG)
        both = _ops.stack([alpha, prev1, prev2], 0)
        new = both.logsumexp(0) + emit[t]
        live = _ops.tensor([t < L for L in in_len], dtype=D.bool_, device=dev).unsqueeze(1)
        alpha = _ops.where(live, new, alpha)
    last = _ops.tensor([[2 * L, max(2 * L - 1, 0)] for L in tg_len], dtype=D.int64, device=dev)
    ends = alpha.gather(1, last)
    ends = _ops.where(_ops.tensor([[True, L > 0] for L in tg_len], dtype=D.bool_, device=dev),
                      ends, _NEG)
    loss = -ends.logsumexp(1)
    impossible = loss > -_NEG / 2
    if zero_infinity:
        loss = _ops.where(impossible, 0.0, loss)
    else:
        loss = _ops.where(impossible, float("inf"), loss)
    if reduction == "mean":
        div = _ops.tensor([max(L, 1) for L in tg_len], dtype=lp.dtype, device=dev)
        return (loss / div).mean()
    if unbatched and reduction == "none":
        return loss.reshape(())
    return _reduce(loss, reduction, "ctc_loss")
