"""Results laid out as PyTorch lays them out, by views: `_output_strides` says the strides,
this module makes a result have them without touching a kernel.

The op runs on its operands permuted so that the result's dims come slowest first
(`x.permute(perm)`, which is C-contiguous when x decided the layout), into a fresh
C-contiguous root; the result is that root viewed back with the wanted strides. So kernels
only ever see C-contiguous outputs (backends need no change), every root stays C-contiguous
(the view and in-place machinery relies on that), and autograd runs through the recorded
permutes: the gradients of x come back in x's own layout, as in PyTorch.
"""
from __future__ import annotations

from ._output_strides import outer_first
from ._run import make_view, record, strides_of
from ._tensor import Tensor
from .autograd.grad_mode import STATE
from .dispatch import OPS


def _inverse(perm):
    inv = [0] * len(perm)
    for i, d in enumerate(perm):
        inv[d] = i
    return tuple(inv)


def permuted_operand(x, perm):
    """x brought to rank len(perm) (leading size-1 dims) and permuted by perm: a view,
    recorded for autograd as PyTorch's unsqueeze and permute would be."""
    ndim = len(perm)
    shape = x._shape
    stride = strides_of(x)
    track = STATE.enabled and x._rg
    if len(shape) < ndim:
        lead = ndim - len(shape)
        v = make_view(x, (1,) * lead + shape, (1,) * lead + tuple(stride), x._offset)
        if track:
            record(OPS["view"], (x,), {"input_shape": shape}, (v,))
        x, shape, stride = v, v._shape, v._stride
    p = make_view(x, tuple(shape[d] for d in perm), tuple(stride[d] for d in perm), x._offset)
    if track:
        record(OPS["permute"], (x,), {"dims": perm}, (p,))
    return p


def laid_out(root, perm, shape, stride):
    """root (C-contiguous, the result's dims in the order perm) viewed as `shape` with
    `stride`; recorded as the permute back. stride must address what that permute does:
    it differs from the permute's only in the strides of size-1 dims."""
    inv = _inverse(perm)
    if root._stride is not None:            # not a fresh root: the plain permute back
        st = root._stride
        stride = tuple(st[d] for d in inv)
    r = make_view(root, shape, stride, root._offset)
    if STATE.enabled and root._rg:
        record(OPS["permute"], (root,), {"dims": inv}, (r,))
    return r


def run_in_layout(call, operands, shape, stride):
    """call(*operands) with a result of `shape` laid out with `stride` (dense): the call
    runs on the operands permuted slowest-dim first (tensors only; scalars pass as they
    are) and its C-contiguous result is viewed back."""
    perm = tuple(outer_first(shape, stride))
    moved = [permuted_operand(x, perm) if isinstance(x, Tensor) else x for x in operands]
    r = call(*moved)
    return laid_out(r, perm, shape, stride)


def made_in_layout(make, shape, stride):
    """make(shape') (a fresh C-contiguous tensor: a factory) with shape's dims ordered
    slowest first by stride, viewed back as `shape` with `stride`."""
    perm = tuple(outer_first(shape, stride))
    return laid_out(make(tuple(shape[d] for d in perm)), perm, shape, stride)
