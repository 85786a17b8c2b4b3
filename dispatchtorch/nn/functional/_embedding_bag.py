"""embedding_bag: the sums, means or maxima of bags of embedding rows, without
materialising the per-bag lists (an index_add by bag number)."""
from __future__ import annotations

import warnings

from ... import _dtype as D
from ... import ops as _ops
from ._linear import embedding_renorm_


def _bags(input, offsets, include_last_offset):
    """(flat indices, bag number of each, number of bags)."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is "
                             "a mini-batch of fixed length sequences. However, found offsets of "
                             f"type {type(offsets)}")
        b, length = input.shape
        bag = _ops.arange(b, device=input.device).repeat_interleave(length)
        return input.reshape(-1), bag, b
    if input.dim() != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.dim() != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    starts = [int(v) for v in offsets.tolist()]
    m = input.shape[0]
    if starts and starts[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           "has to start from position 0. However, got " + str(starts[0]))
    if include_last_offset:
        bounds = starts
    else:
        bounds = starts + [m]
    nbags = len(bounds) - 1
    bag = []
    for i in range(nbags):
        bag += [i] * (min(bounds[i + 1], m) - bounds[i])
    bag += [max(nbags - 1, 0)] * (m - len(bag))     # indices past the last offset
    return input, _ops.tensor(bag, dtype=D.int64, device=input.device), nbags


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    if weight.dtype is D.int64 and input.dtype.is_floating_point:
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, got {mode}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    if sparse or scale_grad_by_freq:
        raise NotImplementedError("embedding_bag: sparse=True (sparse gradients) and "
                                  "scale_grad_by_freq=True are not supported")
    flat, bag, nbags = _bags(input, offsets, include_last_offset)
    if max_norm is not None:
        embedding_renorm_(weight, flat.long(), max_norm, norm_type)
    num = weight.shape[0]
    if padding_idx is not None:
        padding_idx = padding_idx % num
    rows = weight.index_select(0, flat.long())
    keep = (flat != padding_idx) if padding_idx is not None else None
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    if keep is not None:
        rows = rows * keep.to(rows.dtype).unsqueeze(1)
    dim = weight.shape[1]
    if mode in ("sum", "mean"):
        out = _ops.zeros((nbags, dim), dtype=weight.dtype, device=weight.device)
        out = out.index_add(0, bag, rows)
        if mode == "mean":
            ones = keep.to(weight.dtype) if keep is not None else \
                _ops.ones(flat.shape[0], dtype=weight.dtype, device=weight.device)
            count = _ops.zeros(nbags, dtype=weight.dtype, device=weight.device).index_add(
                0, bag, ones)
            out = out / count.clamp_min(1).unsqueeze(1)
        return out
    bags = bag.tolist()
    kept = keep.tolist() if keep is not None else [True] * len(bags)
    parts = []
    for b in range(nbags):
        members = [i for i, (g, k) in enumerate(zip(bags, kept)) if g == b and k]
        if members:
            sel = rows.index_select(0, _ops.tensor(members, dtype=D.int64, device=rows.device))
            parts.append(sel.amax(0) if len(members) == 1 else sel.max(0)[0])
        else:
            parts.append(_ops.zeros(dim, dtype=weight.dtype, device=weight.device))
    return _ops.stack(parts, 0) if parts else _ops.zeros((0, dim), dtype=weight.dtype,
                                                         device=weight.device)


