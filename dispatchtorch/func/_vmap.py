"""vmap as a loop: the function runs once per index of the mapped dimension, on slices
(views) of the mapped inputs, and each output is stacked along its out_dim. PyTorch
rewrites the ops to batched ones instead; the values are the same for a function without
side effects, and composing with grad, jacrev and nested vmaps works as it does there.
Randomness follows PyTorch's modes: "error" refuses a function that draws from the
default generator, "same" gives every index the same draws, "different" fresh ones."""
from __future__ import annotations

import functools

from .. import ops as _ops
from .._tensor import Tensor
from ..ops.random import get_rng_state, set_rng_state
from ..utils._pytree import tree_flatten, tree_unflatten

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")


def _name(func):
    return getattr(func, "__name__", repr(func))


def _in_dims_per_leaf(in_dims, args, func):
    """One in_dim (int or None) per leaf of args, PyTorch's broadcasting of in_dims."""
    head = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if isinstance(in_dims, int) and not isinstance(in_dims, bool):
        per_arg = [in_dims] * len(args)
    elif isinstance(in_dims, tuple):
        if len(in_dims) != len(args):
            raise ValueError(f"{head}: in_dims is not compatible with the structure of `inputs`. "
                             f"in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                             f"structure {tree_flatten(args)[1]}.")
        per_arg = list(in_dims)
    else:
        raise ValueError(f"{head}: expected `in_dims` to be int or a (potentially nested) tuple "
                         f"matching the structure of inputs, got: {type(in_dims)}.")
    dims = []
    for arg, d in zip(args, per_arg):
        n = len(tree_flatten(arg)[0])
        if d is None or isinstance(d, int):
            dims.extend([d] * n)
        else:
            spec = tree_flatten(d)[1]
            try:
                sub = spec.flatten_up_to(arg)
            except ValueError:
                raise ValueError(f"{head}: in_dims is not compatible with the structure of "
                                 f"`inputs`.") from None
            for dim, part in zip(tree_flatten(d)[0], sub):
                dims.extend([dim] * len(tree_flatten(part)[0]))
    return head, dims


def _batch_size(leaves, dims, head):
    sizes = []
    for x, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(f"{head}: in_dim must be an int or None, got {type(d)}")
        if not isinstance(x, Tensor):
            raise ValueError(f"{head}: Got in_dim={d} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please use None "
                             f"as the respective in_dim")
        if not -max(x.dim(), 1) <= d < max(x.dim(), 1) or x.dim() == 0:
            raise ValueError(f"{head}: Got in_dim={d} for some input, but that input is a Tensor of "
                             f"dimensionality {x.dim()} so expected in_dim to satisfy "
                             f"-{x.dim()} <= in_dim < {x.dim()}.")
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if len(set(sizes)) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, "
                         f"got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _out_dims_per_leaf(func, output, out_dims):
    """One out_dim per leaf of the output: an int or None for all, or a tuple entry per
    element of a tuple output (broadcast over that element's leaves)."""
    if out_dims is None or isinstance(out_dims, int):
        return [out_dims] * len(tree_flatten(output)[0])
    items = output if isinstance(output, tuple) else (output,)
    if not isinstance(out_dims, tuple) or len(out_dims) != len(items):
        raise ValueError(f"vmap({_name(func)}, ...): out_dims is not compatible with the structure "
                         f"of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but "
                         f"outputs has structure {tree_flatten(output)[1]}.")
    return [d for item, d in zip(items, out_dims) for _ in tree_flatten(item)[0]]


def _stack_outputs(func, results, out_dims):
    """results: one output pytree per index -> the batched output pytree."""
    flat0, spec = tree_flatten(results[0])
    stacked = []
    columns = zip(*(tree_flatten(r)[0] for r in results))
    for col, d in zip(columns, _out_dims_per_leaf(func, results[0], out_dims)):
        if d is None:
            stacked.append(col[0])
            continue
        if not isinstance(col[0], Tensor):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, "
                             f"got type {type(col[0])}. Did you mean to set out_dims= to None for "
                             f"output?")
        stacked.append(_ops.stack(col, dim=d if d >= 0 else d + col[0].dim() + 1))
    return tree_unflatten(stacked, spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over a dimension of its inputs (see the module docstring)."""
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        leaves, spec = tree_flatten(args)
        head, dims = _in_dims_per_leaf(in_dims, args, func)
        n = _batch_size(leaves, dims, head)
        start = get_rng_state()
        results = []
        for i in range(n):
            if randomness == "same":
                set_rng_state(start)
            sliced = [x if d is None else x.select(d, i) for x, d in zip(leaves, dims)]
            results.append(func(*tree_unflatten(sliced, spec), **kwargs))
            if randomness == "error" and i == 0 and not _ops.equal(get_rng_state(), start):
                set_rng_state(start)
                raise RuntimeError("vmap: called random operation while in randomness error mode. "
                                   "Please either use the 'same' or 'different' randomness flags on "
                                   "vmap or perform the randomness operation out of vmap")
        return _stack_outputs(func, results, out_dims)
    return wrapper
