"""Fused optimizer updates: one row per rule over lists of tensors, PyTorch's
`torch._fused_adam_` / `torch._fused_sgd_` shape, so a step is one call.

The decomposition is PyTorch's single-tensor algorithm in public in-place ops (every
backend runs it); a backend may register a kernel under the row's name, called as
`fn(params, grads, ..., **params)` with lists of native handles, that updates them in
place (the CPU backend does each tensor in cache-sized blocks on its thread pool:
one pass over memory instead of a dozen). Nothing is recorded for autograd: the
optimizers call these under no_grad, and `differentiable=True` keeps the
per-parameter ops instead.
"""
from __future__ import annotations

from .._inplace import bump
from .._run import kernel_for, launch
from ..dispatch import DECOMPOSE
from ._composite import composite


def _adam_decomp(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr,
                 beta1, beta2, eps, weight_decay, decoupled, amsgrad, maximize):
    for i, (p, g, m, v) in enumerate(zip(params, grads, exp_avgs, exp_avg_sqs)):
        step = state_steps[i].add_(1).item()
        if maximize:
            g = -g
        if weight_decay:
            if decoupled:
                p.mul_(1 - lr * weight_decay)
            else:
                g = g.add(p, alpha=weight_decay)
        m.lerp_(g, 1 - beta1)
        v.mul_(beta2).add_((g * (1 - beta2)).mul_(g))           # addcmul_(g, g, value=..)
        step_size = lr / (1 - beta1 ** step)
        bc2_sqrt = (1 - beta2 ** step) ** 0.5
        second = v
        if amsgrad:
            second = max_exp_avg_sqs[i]
            second.copy_(second.maximum(v))
        denom = (second.sqrt() / bc2_sqrt).add_(eps)
        p.add_((m * -step_size).div_(denom))          # addcdiv_(m, denom, value=-step_size)


def _sgd_decomp(params, grads, momentum_buffers, *, lr, momentum, dampening, weight_decay,
                nesterov, maximize):
    for i, (p, g) in enumerate(zip(params, grads)):
        if maximize:
            g = -g
        if weight_decay:
            g = g.add(p, alpha=weight_decay)
        if momentum:
            buf = momentum_buffers[i]
            buf.mul_(momentum).add_(g, alpha=1 - dampening)
            g = g.add(buf, alpha=momentum) if nesterov else buf
        p.add_(g, alpha=-lr)


FUSED_ADAM = composite(
    "_fused_adam_", kind="optim", args=(), decomp=_adam_decomp, differentiable=False,
    signature="_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, "
              "*, lr, beta1, beta2, eps, weight_decay, decoupled, amsgrad, maximize)",
    doc="Adam/AdamW's update of every tensor of the lists, in place; each 0-d state_steps "
        "entry is incremented first")
FUSED_SGD = composite(
    "_fused_sgd_", kind="optim", args=(), decomp=_sgd_decomp, differentiable=False,
    signature="_fused_sgd_(params, grads, momentum_buffers, *, lr, momentum, dampening, "
              "weight_decay, nesterov, maximize)",
    doc="SGD's update of every tensor of the lists, in place (momentum buffers already "
        "initialised)")


def _fused(op, lists, written, params):
    first = lists[0][0]
    place = first._place
    k = kernel_for(op, place)
    if k is DECOMPOSE:
        op.decomp(*lists, **params)
        return
    handles = [[t._h for t in ts] if ts is not None else None for ts in lists]
    launch(op, k, place, handles, params, (first._dtype,))
    for ts in written:
        for t in ts or ():
            bump(t)


def fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, **kw):
    """Run the `_fused_adam_` row (lists of tensors of one device and dtype; the step
    counts are 0-d float32 tensors, as PyTorch keeps them, on the CPU)."""
    _fused(FUSED_ADAM, (params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps),
           (params, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps), kw)


def fused_sgd_(params, grads, momentum_buffers=None, **kw):
    """Run the `_fused_sgd_` row (lists of tensors of one device and dtype)."""
    _fused(FUSED_SGD, (params, grads, momentum_buffers), (params, momentum_buffers), kw)
