"""torch.func.functionalize run eagerly: func computes on private copies of its tensor
inputs, and what it wrote into them is copied back at the end. So, as in PyTorch, no
output aliases an input, an input's mutation is still seen by the caller, and outputs
that are views of one another stay so (remove="mutations") or each get their own memory
(remove="mutations_and_views"). Each input is copied alone, as PyTorch's functional
wrappers are: inside func, a write through one input is not seen through another input
that shares its memory; outside, after the call, it is."""
from __future__ import annotations

import functools

from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..utils._pytree import tree_flatten, tree_map, tree_unflatten

_INVALID_REMOVE = (
    "functionalize(f, remove='mutations'): received invalid argument for remove={}. Valid "
    "options are:\n     remove='mutations': all inplace and out= operators will be removed "
    "from the program, and replaced with their out-of-place equivalents.\n     "
    "remove='mutations_and_views': In addition to the above, all aliasing operators {{view}} "
    "will be replaced with their non-aliasing counterparts, {{view}}_copy.\n")


def functionalize(func, *, remove="mutations"):
    """A function computing func's results without writing into (or aliasing) its inputs
    until it returns."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(_INVALID_REMOVE.format(remove))

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        flat, spec = tree_flatten((args, kwargs))
        copies = [x.clone() if isinstance(x, Tensor) else None for x in flat]
        versions = [c._version if c is not None else None for c in copies]
        inner_args, inner_kwargs = tree_unflatten(
            [c if c is not None else x for x, c in zip(flat, copies)], spec)
        out = func(*inner_args, **inner_kwargs)
        _write_back(flat, copies, versions)
        if remove == "mutations_and_views":
            out = tree_map(lambda t: t.clone() if isinstance(t, Tensor) else t, out)
        return out
    return wrapped


def _write_back(flat, copies, versions):
    for original, copy, version in zip(flat, copies, versions):
        if copy is None or copy._version == version:
            continue
        if original.is_leaf and original.requires_grad and is_grad_enabled():
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        with no_grad():
            original.copy_(copy)
