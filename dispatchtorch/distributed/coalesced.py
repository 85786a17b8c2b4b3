"""all_reduce_coalesced / all_gather_coalesced: PyTorch's deprecated many-tensor forms,
run here as one flat collective over the tensors concatenated (one message, not many)."""
from __future__ import annotations

import warnings

from .. import ops as _ops
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .collectives import all_gather_into_tensor, all_reduce
from .group import GroupMember, default_group
from .reduce_op import ReduceOp

_DEPRECATED = ("`torch.distributed.{}` will be deprecated. If you must use it, please revisit "
               "our documentation later at "
               "https://pytorch.org/docs/main/distributed.html#collective-functions")


def _check_tensor_list(param, name):
    if not isinstance(param, list) or not all(isinstance(p, Tensor) for p in param):
        raise TypeError(f"""Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]
             but got {type(param)} instead.""")


def _same_dtype(tensors):
    last = None
    for t in tensors:
        if last is not None and last != t.dtype:
            raise ValueError(f"Invalid usage of tensors with different dtypesFound {last} and  "
                             f"{t.dtype}")
        last = t.dtype


def _outside(group, what):
    if group is GroupMember.NON_GROUP_MEMBER:
        default_group(what)
        world = GroupMember.WORLD
        warnings.warn(f"Running {what} on global rank {world.rank()} which does not belong to "
                      f"the given group.", stacklevel=3)
        return True
    return False


def _flat(tensors):
    with no_grad():
        return _ops.cat([t.detach().reshape(-1) for t in tensors])


def _split_into(flat, tensors):
    with no_grad():
        at = 0
        for t in tensors:
            t.detach().copy_(flat[at:at + t.numel()].reshape(t.shape))
            at += t.numel()


def _then(work, after, async_op, outputs):
    """Async: a Future of `outputs`, as PyTorch 2.13's coalesced forms return."""
    work._after = list(work._after) + [after]
    work._outputs = outputs
    if async_op:
        return work.get_future()
    work.wait()
    return None


def all_reduce_coalesced(tensors, op=ReduceOp.SUM, group=None, async_op=False):
    """Each tensors[i] = op over every rank's tensors[i], in place (one all_reduce)."""
    warnings.warn(_DEPRECATED.format("all_reduce_coalesced"), FutureWarning, stacklevel=2)
    _check_tensor_list(tensors, "tensor")
    _same_dtype(tensors)
    if _outside(group, "all_reduce_coalesced"):
        return None
    if not tensors:
        return None
    flat = _flat(tensors)
    w = all_reduce(flat, op, group, async_op=True)
    return _then(w, lambda: _split_into(flat, tensors), async_op, list(tensors))


def all_gather_coalesced(output_tensor_lists, input_tensor_list, group=None, async_op=False):
    """output_tensor_lists[i][j] = rank i's input_tensor_list[j] (one all_gather)."""
    warnings.warn(_DEPRECATED.format("all_gather_coalesced"), FutureWarning, stacklevel=2)
    if _outside(group, "all_gather_coalesced"):
        return None
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    _same_dtype(input_tensor_list)
    if not isinstance(output_tensor_lists, list):
        raise TypeError("Invalid function argument: output_tensor_lists should be a list")
    for lst in output_tensor_lists:
        _check_tensor_list(lst, "output_tensor_lists")
        _same_dtype(lst)
    pg = default_group("all_gather_coalesced") if group is None else group
    if len(output_tensor_lists) != pg.size():
        raise ValueError(f"all_gather_coalesced: output_tensor_lists has "
                         f"{len(output_tensor_lists)} lists, expected one per rank ({pg.size()})")
    sizes = [t.numel() for t in input_tensor_list]
    for i, lst in enumerate(output_tensor_lists):
        if [t.numel() for t in lst] != sizes:
            raise ValueError(f"all_gather_coalesced: output_tensor_lists[{i}] sizes "
                             f"{[t.numel() for t in lst]} differ from input_tensor_list's {sizes}")
    flat_in = _flat(input_tensor_list)
    out = _ops.empty((pg.size() * flat_in.numel(),), dtype=flat_in.dtype, device=flat_in.device)
    w = all_gather_into_tensor(out, flat_in, pg, async_op=True)
    outs = [t for lst in output_tensor_lists for t in lst]
    return _then(w, lambda: _split_into(out, outs), async_op, outs)
