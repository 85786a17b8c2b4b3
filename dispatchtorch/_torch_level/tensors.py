"""Small torch.* functions of tensors that PyTorch keeps at top level beside the methods:
detach, get_device, is_neg, empty_strided, empty_permuted,
norm_except_dim, unravel_index, hash_tensor, the deprecated range / chain_matmul / frobenius_norm /
nuclear_norm (with PyTorch's warnings)."""
from __future__ import annotations

import builtins
import math
import numbers
import warnings

from .. import _dtype as D
from .. import linalg
from .. import ops as _ops
from .._tensor import Tensor
from ..dispatch.warn_once import warn_once
from .._shape import norm_dims, reduced_shape
from ..ops._out import takes_out
from ._args import int_arg, int_tuple, tensor_arg


def detach(input):
    return tensor_arg("detach", input).detach()


def detach_(input):
    return tensor_arg("detach_", input).detach_()


def get_device(input):
    """The device index: -1 for a CPU tensor."""
    return tensor_arg("get_device", input).get_device()


def is_neg(input):
    return tensor_arg("is_neg", input).is_neg()


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor with the given strides: a view of a storage just large
    enough for them."""
    size = int_tuple("empty_strided", "size", 1, size)
    stride = int_tuple("empty_strided", "stride", 2, stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality "
                           f"of strides ({len(stride)})")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(size)}: {list(size)}")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    extent = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    out = _ops.empty(extent, dtype=dtype, device=device).as_strided(size, stride)
    return out.requires_grad_() if requires_grad else out


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An uninitialised tensor of `size` whose memory runs in the order `physical_layout`
    (outermost dim first): a permuted view of a contiguous one."""
    size, order = tuple(int(s) for s in size), tuple(int(d) for d in physical_layout)
    if len(size) != len(order):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    for i, d in enumerate(order):
        if not 0 <= d < len(size):
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and "
                               f"{len(size) - 1}, but got {d} at index {i}).  NB: negative dims "
                               f"not currently supported; file an issue if you want it.")
    if len(set(order)) != len(order):
        raise RuntimeError("Duplicate dim not allowed")
    inverse = sorted(builtins.range(len(order)), key=order.__getitem__)
    out = _ops.empty([size[d] for d in order], dtype=dtype, device=device).permute(inverse)
    return out.requires_grad_() if requires_grad else out


def norm_except_dim(v, pow=2, dim=0):
    """The `pow`-norm over every dim but `dim`, kept as size-1 dims (the norm of all of v
    for dim=-1): weight_norm's g. ATen's, so its errors come from the ops it runs."""
    pow, dim = int_arg("norm_except_dim", "pow", 2, pow), int_arg("norm_except_dim", "dim", 3,
                                                                      dim)
    if not (v.dtype.is_floating_point or v.dtype.is_complex):
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {v.dtype.pt_name} instead.")
    n = max(v.dim(), 1)
    if dim not in (-1, 0, v.dim() - 1) and not -n <= dim < n:      # transpose(0, dim)'s
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    if v.dim() == 0 and dim == 0:                                    # v.size(0)'s
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if dim == -1:
        return v.norm(pow)
    if dim == 0:
        return v.contiguous().view(v.shape[0], -1).norm(pow, 1).view(
            (v.shape[0],) + (1,) * (v.dim() - 1))
    if dim == v.dim() - 1:
        return v.contiguous().view(-1, v.shape[-1]).norm(pow, 0).view(
            (1,) * (v.dim() - 1) + (v.shape[-1],))
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def unravel_index(indices, shape):
    """The coordinates of flat `indices` in a tensor of `shape`, one tensor per dim
    (as PyTorch's: negative indices wrap)."""
    if not isinstance(indices, Tensor) or indices.dtype.is_floating_point or \
            indices.dtype.is_complex or indices.dtype is D.bool_:
        got = indices.dtype if isinstance(indices, Tensor) else type(indices).__name__
        raise TypeError(f"expected 'indices' to be integer dtype, but got {got}")
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (int(shape),)
    elif isinstance(shape, (list, tuple)):
        for dim in shape:
            if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                                f"{type(dim)}")
        shape = tuple(int(d) for d in shape)
    else:
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got "
                        f"{type(shape)}")
    if any(d < 0 for d in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    coefs, c = [], 1
    for d in reversed(shape[1:] + (1,)):
        c *= d
        coefs.append(c)
    coefs.reverse()
    dev = indices.device
    res = indices.unsqueeze(-1).floor_divide(_ops.tensor(coefs, dtype=D.int64, device=dev)) \
        % _ops.tensor(list(shape), dtype=D.int64, device=dev)
    return res.unbind(-1)


_RANGE_MSG = ("torch.range is deprecated and will be removed in a future release because its "
              "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
              "which produces values in [start, end).")


@takes_out("range", "cast", factory=True)
def range(start, end, step=1, *, dtype=None, layout=None, device=None, requires_grad=False,
           pin_memory=False):
    """[start, end] with `end` included, in the default float dtype whatever the
    arguments' types (ATen's range: start + i * step in double, or int64 for an integer
    dtype, then cast)."""
    warnings.warn(_RANGE_MSG, UserWarning, stacklevel=3)
    dt = D.get_default_dtype() if dtype is None else D.to_dtype(dtype)
    integral = not (dt.is_floating_point or dt.is_complex)
    conv = int if integral else float
    xstart, xend, xstep = conv(start), conv(end), conv(step)
    if xstep == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(xstart) and math.isfinite(xend)):       # as C++ prints a double
        raise RuntimeError(f"unsupported range: {xstart:g} -> {xend:g}")
    if not ((xstep > 0 and xend >= xstart) or (xstep < 0 and xend <= xstart)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    span = xend - xstart
    size = int(span / xstep) + 1 if not integral else abs(span) // abs(xstep) + 1
    acc = D.int64 if integral else D.float64
    values = _ops.arange(size, dtype=acc, device=device) * xstep + xstart
    out = values.to(dt)
    return out.requires_grad_() if requires_grad else out



@takes_out("chain_matmul", "exact")
def chain_matmul(*matrices):
    """Deprecated: linalg.multi_dot of the arguments (a copy of a single matrix)."""
    warn_once("chain_matmul", "torch.chain_matmul is deprecated and will be removed in a "
              "future PyTorch release. Use torch.linalg.multi_dot instead, which accepts a "
              "list of two or more tensors rather than multiple parameters.", stacklevel=3)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone()
    return linalg.multi_dot(list(matrices))


@takes_out("frobenius_norm", "exact")
def frobenius_norm(input, dim, keepdim=False):
    """Deprecated (ATen keeps it for TorchScript): the 2-norm over at most two dims (all
    of them for an empty `dim`)."""
    warn_once("frobenius_norm", "at::frobenius_norm is deprecated and it is just left for JIT "
              "compatibility. It will be removed in a future PyTorch release. Please use "
              "`linalg.vector_norm(A, 2., dim, keepdim)` instead", stacklevel=3)
    dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {input.dtype.pt_name} instead.")
    return linalg.vector_norm(input, 2.0, dims or None, keepdim)


@takes_out("nuclear_norm", "exact")
def nuclear_norm(input, dim=None, keepdim=False):
    """Deprecated: linalg.matrix_norm(input, 'nuc', dim, keepdim); the overload without
    `dim` takes the last two dims (and `keepdim` second: nuclear_norm(x, True))."""
    warn_once("nuclear_norm", "at::nuclear_norm is deprecated and it is just left for JIT "
              "compatibility. It will be removed in a future PyTorch release. Please use "
              "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead", stacklevel=3)
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    elif isinstance(dim, numbers.Integral):        # an int[2] argument: PyTorch repeats it
        dim = (dim, dim)
    return linalg.matrix_norm(input, "nuc", (-2, -1) if dim is None else tuple(dim), keepdim)


@takes_out("hash_tensor", dtype="exact")
def hash_tensor(input, dim=None, *, keepdim=False, mode=0):
    """PyTorch 2.13's hash: the xor of the elements, each widened to float64 or int64 and
    read as its 64 bits, a uint64 result (mode 0, the only one). Written in public ops: the
    reduced elements pairwise xor-ed, halving the reduced length each round."""
    x = tensor_arg("hash_tensor", input).detach()
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if x.dtype.bare or x.dtype.is_complex:
        raise NotImplementedError(f"\"xor_sum_cpu\" not implemented for '{x.dtype.pt_name}'")
    if dim is None and x.numel() == 0:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' "
                           "argument.")
    shape = tuple(x.shape)
    red = norm_dims(dim, len(shape))         # PyTorch's dim message names no op here
    for d in red:
        if shape[d] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    bits = (x.to(D.float64) if x.dtype.is_floating_point else x.to(D.int64)).view(D.int64)
    kept = [d for d in builtins.range(len(shape)) if d not in red]
    m = math.prod(shape[d] for d in red)
    v = bits.permute(kept + list(red)).reshape([shape[d] for d in kept] + [m])
    while m > 1:
        if m % 2:
            v = _ops.cat([v, _ops.zeros_like(v.narrow(-1, 0, 1))], -1)
            m += 1
        m //= 2
        v = _ops.bitwise_xor(v.narrow(-1, 0, m), v.narrow(-1, m, m))
    out_shape = reduced_shape(shape, red, keepdim) if shape else ()
    return v.reshape(out_shape).view(D.uint64)


PUBLIC = {
    "hash_tensor": hash_tensor,
    "detach": detach, "detach_": detach_, "get_device": get_device, "is_neg": is_neg,
    "empty_strided": empty_strided,
    "empty_permuted": empty_permuted, "norm_except_dim": norm_except_dim,
    "unravel_index": unravel_index,
    "range": range, "chain_matmul": chain_matmul, "frobenius_norm": frobenius_norm,
    "nuclear_norm": nuclear_norm,
}
