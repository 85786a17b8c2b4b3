"""Shape ops that copy: flip, roll, repeat, tile, repeat_interleave, tril / triu, diag,
the stacking family, broadcast_tensors and tensor_split. All are composites over
views, cat, gather and where; flip, roll, tril, triu and diag have derivative rules
of their own (one backward node)."""
from __future__ import annotations

import operator

from .. import _dtype as D
from .._shape import broadcast_shapes, norm_dim, numel
from .._tensor import Tensor
from ._composite import composite, inplace_variant, run
from ._args import check_tensor
from ._out import takes_out
from . import creation, memory, pointwise, scans, sorting


def _int_list(x, name, op):
    if isinstance(x, Tensor):
        x = x.tolist()
    if isinstance(x, int):
        return [x]
    try:
        return [operator.index(v) for v in x]
    except TypeError:
        raise TypeError(f"{op}(): argument '{name}' must be a tuple of ints, got {x!r}") from None


# -- flip and roll ------------------------------------------------------------------------------

def _flip(x, dims):
    r = x
    for d in dims:
        n = x.shape[d]
        if n > 1:
            r = r.index_select(d, creation.arange(n - 1, -1, -1, device=x.device))
    return x.clone() if r is x else r


FLIP = composite("flip", _flip, kind="indexing", grad=lambda g, dims: flip(g, dims),
                 signature="flip(x, dims)", doc="reverse the order along dims (a copy)")


def _bare_flip_check(input, dims):
    """PyTorch flips bare dtypes only by its row-copy path: the innermost dim longer
    than 1 not flipped; otherwise its flip_cpu kernel refuses."""
    inner = max((d for d, n in enumerate(input._shape) if n > 1), default=None)
    if inner is None or inner in dims:
        raise NotImplementedError(f"\"flip_cpu\" not implemented for '{input._dtype.pt_name}'")


def flip(input, dims):
    check_tensor(input, "flip")
    if not isinstance(dims, (tuple, list, Tensor)):
        raise TypeError(f"flip(): argument 'dims' (position 2) must be tuple of ints, not "
                        f"{type(dims).__name__}")
    dims = [norm_dim(d, input.dim(), "flip") for d in _int_list(dims, "dims", "flip")]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"flip: dim {dims[0]} appears multiple times in the list of dims")
    if input._dtype.bare:
        _bare_flip_check(input, dims)
    return run(FLIP, (input,), {"dims": tuple(d for d in dims if input.dim())})


def fliplr(input):
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def _roll(x, shifts, dims):
    if not dims:
        return _roll(x.reshape(-1), shifts, (0,)).reshape(x.shape)
    r = x
    for s, d in zip(shifts, dims):
        n = x.shape[d]
        s = s % n if n else 0
        if s:
            r = memory.cat([r.narrow(d, n - s, s), r.narrow(d, 0, n - s)], d)
    return x.clone() if r is x else r


ROLL = composite("roll", _roll, kind="indexing",
                 grad=lambda g, shifts, dims: run(ROLL, (g,), {"shifts": tuple(-s for s in shifts),
                                                               "dims": dims}),
                 signature="roll(x, shifts, dims=None)",
                 doc="rotate elements along dims (flattened when dims is None)")


def roll(input, shifts, dims=None):
    check_tensor(input, "roll")
    shifts = _int_list(shifts, "shifts", "roll")
    if dims is not None:
        _int_list(dims, "dims", "roll")
    if input.dim() and not input.numel():      # PyTorch returns an empty copy at once
        return input.clone()
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"roll: shifts and dimensions must align. shifts: {len(shifts)}, "
                               f"dims:0")
        dims = ()
    else:
        dims = _int_list(dims, "dims", "roll")
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                               f"{len(dims)}")
        if input.dim() == 0:
            raise IndexError(f"roll(): Dimension specified as {dims[0]} but tensor has no dimensions")
        dims = tuple(norm_dim(d, input.dim(), "roll") for d in dims)
    if input.dim() == 0:
        return input.clone()
    return run(ROLL, (input,), {"shifts": tuple(shifts), "dims": dims})


# -- repeat, tile, repeat_interleave ------------------------------------------------------------

def _repeat(x, repeats):
    lead = len(repeats) - x.dim()
    shape = (1,) * lead + tuple(x.shape)
    x = x.reshape(shape)
    # (r0, s0, r1, s1, ...) from a broadcast view, then merged pairwise
    view = [d for s in shape for d in (1, s)]
    expanded = [d for r, s in zip(repeats, shape) for d in (r, s)]
    return x.reshape(view).expand(expanded).reshape(tuple(r * s for r, s in zip(repeats, shape)))


REPEAT = composite("repeat", _repeat, kind="indexing", signature="Tensor.repeat(*sizes)",
                   doc="tile the tensor sizes[i] times along each dim (a broadcast view, "
                       "then one copy)")


def repeat(input, *sizes):
    check_tensor(input, "repeat")
    sizes = _int_list(sizes[0] if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes,
                      "repeats", "repeat")
    if len(sizes) < input.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {sizes}")
    return run(REPEAT, (input,), {"repeats": tuple(sizes)})


def tile(input, dims):
    dims = _int_list(dims, "dims", "tile")
    if len(dims) < input.dim():
        dims = [1] * (input.dim() - len(dims)) + dims
    return repeat(input, dims)


def _interleave_index(repeats, total):
    """repeat_interleave(repeats): index i repeated repeats[i] times (a binary search of
    the running total, so no host loop)."""
    ends = scans.cumsum(repeats, 0)
    positions = creation.arange(total, device=repeats.device)
    return sorting.searchsorted(ends, positions, right=True)


def _repeat_interleave(x, repeats, dim, output_size):
    if x is None:                 # the one-argument form: indices
        total = output_size if output_size is not None else int(repeats.sum().item()) \
            if repeats.numel() else 0
        return _interleave_index(repeats, total)
    if isinstance(repeats, int):
        n = x.shape[dim]
        shape = list(x.shape)
        shape.insert(dim + 1, repeats)
        r = x.unsqueeze(dim + 1).expand(shape)
        return r.reshape(x.shape[:dim] + (n * repeats,) + x.shape[dim + 1:])
    total = output_size if output_size is not None else int(repeats.sum().item()) \
        if repeats.numel() else 0
    if repeats.numel() == 1 and x.shape[dim] != 1:
        repeats = repeats.reshape(1).expand(x.shape[dim])
    return x.index_select(dim, _interleave_index(repeats.reshape(-1), total))


REPEAT_INTERLEAVE = composite(
    "repeat_interleave", _repeat_interleave, kind="indexing", args=("x", "repeats"),
    signature="repeat_interleave(x, repeats, dim=None, *, output_size=None)",
    doc="repeat each element (slice along dim) repeats[i] times")


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:
        check_tensor(input, "repeat_interleave")
        if input.dim() > 1 or input.dtype.is_floating_point:
            raise RuntimeError("repeat_interleave: repeats must be 0-dim or 1-dim integer tensor")
        if input.numel() and int(input.min().item()) < 0:
            raise RuntimeError("repeats can not be negative")
        return run(REPEAT_INTERLEAVE, (None, input.reshape(-1).long()),
                   {"dim": None, "output_size": output_size})
    check_tensor(input, "repeat_interleave")
    if dim is None:
        input, dim = input.reshape(-1), 0
    else:
        dim = norm_dim(dim, input.dim(), "repeat_interleave")
        if input.dim() == 0:
            input = input.reshape(1)
    if isinstance(repeats, Tensor):
        if repeats.dim() > 1 or repeats.dtype.is_floating_point:
            raise RuntimeError("repeat_interleave: repeats must be 0-dim or 1-dim integer tensor")
        if repeats.numel() != 1 and repeats.numel() != input.shape[dim]:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats.numel()} and input.size({dim}) = "
                               f"{input.shape[dim]}")
        if repeats.numel() and int(repeats.min().item()) < 0:
            raise RuntimeError("repeats can not be negative")
        repeats = repeats.long()
    else:
        repeats = operator.index(repeats)
        if repeats < 0:
            raise RuntimeError("repeats can not be negative")
    return run(REPEAT_INTERLEAVE, (input, repeats), {"dim": dim, "output_size": output_size})


# -- triangles and diagonals ----------------------------------------------------------------------

def _triangle_mask(x, k, lower):
    """(rows, cols) bool mask: col - row <= k (lower) or >= k (upper)."""
    n, m = x.shape[-2:]
    offset = creation.arange(m, device=x.device) - creation.arange(n, device=x.device).unsqueeze(1)
    return offset <= k if lower else offset >= k


def _triangle(lower):
    def decomp(x, diagonal):
        return pointwise.where(_triangle_mask(x, diagonal, lower), x, creation.zeros((), dtype=x.dtype,
                                                                           device=x.device))
    return decomp


TRIL = composite("tril", _triangle(True), kind="indexing",
                 grad=lambda g, diagonal: run(TRIL, (g,), {"diagonal": diagonal}),
                 signature="tril(x, diagonal=0)", doc="zero above the diagonal of the last two dims")
TRIU = composite("triu", _triangle(False), kind="indexing",
                 grad=lambda g, diagonal: run(TRIU, (g,), {"diagonal": diagonal}),
                 signature="triu(x, diagonal=0)", doc="zero below the diagonal of the last two dims")


def _triangle_fn(op, name):
    def fn(input, diagonal=0, *, out=None):
        check_tensor(input, name)
        if input._dtype.bare:
            raise NotImplementedError(f'"{name}" not implemented for \'{input._dtype.pt_name}\'')
        if input.dim() < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return run(op, (input,), {"diagonal": operator.index(diagonal)})
    fn.__name__ = fn.__qualname__ = name
    return fn


tril = takes_out("tril", "exact")(_triangle_fn(TRIL, "tril"))
triu = takes_out("triu", "exact")(_triangle_fn(TRIU, "triu"))
tril_ = inplace_variant(tril, "tril_", overlap_ok=True)
triu_ = inplace_variant(triu, "triu_", overlap_ok=True)


def embed_diagonal(v, shape, offset, dim1=-2, dim2=-1):
    """A zero tensor of `shape` with v written on its diagonal(offset, dim1, dim2);
    an in-place write into a fresh tensor, so it is differentiable in v."""
    z = creation.zeros(shape, dtype=v.dtype, device=v.device)
    z.diagonal(offset, dim1, dim2).copy_(v)
    return z


def _diag(x, diagonal, shape):
    if x.dim() == 1:
        n = x.shape[0] + abs(diagonal)
        return embed_diagonal(x, (n, n), diagonal, 0, 1)
    return x.diagonal(diagonal).clone()


def _diag_grad(g, shape, diagonal):
    if len(shape) == 1:
        return g.diagonal(diagonal)
    return embed_diagonal(g, shape, diagonal, 0, 1)


DIAG = composite("diag", _diag, kind="indexing", grad=_diag_grad, signature="diag(x, diagonal=0)",
                 doc="1-d: a square matrix with x on a diagonal; 2-d: a copy of a diagonal")


@takes_out("diag", "exact")
def diag(input, diagonal=0, *, out=None):
    check_tensor(input, "diag")
    if input.dim() not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")
    return run(DIAG, (input,), {"diagonal": operator.index(diagonal), "shape": input.shape})


def _diag_embed(x, offset, dim1, dim2):
    n = x.shape[-1] + abs(offset)
    nd = x.dim() + 1
    d1, d2 = norm_dim(dim1, nd, "diag_embed"), norm_dim(dim2, nd, "diag_embed")
    shape = list(x.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, n)
    return embed_diagonal(x, tuple(shape), offset, d1, d2)


DIAG_EMBED = composite("diag_embed", _diag_embed, kind="indexing",
                       signature="diag_embed(x, offset=0, dim1=-2, dim2=-1)",
                       doc="the last dim of x on diagonals of new (dim1, dim2) planes")


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    check_tensor(input, "diag_embed")
    return run(DIAG_EMBED, (input,), {"offset": offset, "dim1": dim1, "dim2": dim2})


# -- stacking, broadcasting, splitting ----------------------------------------------------------

def _tensors(tensors, op):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): expected a tuple of Tensors, got {type(t).__name__}")
    return list(tensors)


def atleast_1d(*tensors):
    return _atleast(tensors, 1)


def atleast_2d(*tensors):
    return _atleast(tensors, 2)


def atleast_3d(*tensors):
    return _atleast(tensors, 3)


def _atleast(tensors, n):
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    items = [tensors[0]] if single else list(tensors[0] if len(tensors) == 1 else tensors)
    out = []
    for t in items:
        if t.dim() >= n:
            out.append(t)
        elif n == 1 or t.dim() == 0:
            out.append(t.reshape((1,) * n))
        elif n == 2:
            out.append(t.unsqueeze(0))
        else:       # 3-d: (n,) -> (1, n, 1), (a, b) -> (a, b, 1)
            out.append(t.reshape(1, -1, 1) if t.dim() == 1 else t.unsqueeze(-1))
    return out[0] if single else tuple(out)


def _stack_decomp(how):
    def decomp(*tensors):
        if how == "h":
            ts = atleast_1d(*tensors)
            return memory.cat(ts, 0 if ts[0].dim() == 1 else 1)
        if how == "v":
            return memory.cat(atleast_2d(*tensors), 0)
        if how == "d":
            return memory.cat(atleast_3d(*tensors), 2)
        cols = [t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors]     # column_stack
        return memory.cat(cols, 1)
    return decomp


HSTACK = composite("hstack", _stack_decomp("h"), kind="memory", args=("tensors",),
                   signature="hstack(tensors)", doc="cat along dim 1 (dim 0 for 1-d tensors)")
VSTACK = composite("vstack", _stack_decomp("v"), kind="memory", args=("tensors",),
                   signature="vstack(tensors)", doc="cat of atleast_2d tensors along dim 0")
DSTACK = composite("dstack", _stack_decomp("d"), kind="memory", args=("tensors",),
                   signature="dstack(tensors)", doc="cat of atleast_3d tensors along dim 2")
COLUMN_STACK = composite("column_stack", _stack_decomp("c"), kind="memory", args=("tensors",),
                         signature="column_stack(tensors)",
                         doc="0-d and 1-d tensors as columns, then cat along dim 1")


def _stacker(op, name):
    def fn(tensors, *, out=None):
        ts = _tensors(tensors, name)
        if not ts:
            raise RuntimeError(f"{name} expects a non-empty TensorList")
        return run(op, tuple(ts), {})
    fn.__name__ = fn.__qualname__ = name
    return fn


hstack = takes_out("hstack", "inputs", "any")(_stacker(HSTACK, "hstack"))
vstack = row_stack = takes_out("vstack", "inputs", "any")(_stacker(VSTACK, "vstack"))
dstack = takes_out("dstack", "inputs", "any")(_stacker(DSTACK, "dstack"))
column_stack = takes_out("column_stack", "inputs", "any")(_stacker(COLUMN_STACK, "column_stack"))


def _broadcast_tensors(*tensors):
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t.expand(shape) for t in tensors)


BROADCAST_TENSORS = composite("broadcast_tensors", _broadcast_tensors, kind="view",
                              args=("tensors",), signature="broadcast_tensors(*tensors)",
                              doc="views of every tensor expanded to the broadcast shape")


def broadcast_tensors(*tensors):
    ts = _tensors(list(tensors), "broadcast_tensors")
    return run(BROADCAST_TENSORS, tuple(ts), {})


def _tensor_split(x, bounds, dim):
    # python-slice semantics: an index before its predecessor gives an empty piece
    return tuple(x.narrow(dim, start, builtins_max(0, stop - start))
                 for start, stop in zip(bounds, bounds[1:]))


builtins_max = max


TENSOR_SPLIT = composite("tensor_split", _tensor_split, kind="view",
                         signature="tensor_split(x, indices_or_sections, dim=0)",
                         doc="views between split indices, or n nearly equal sections "
                             "(the first size % n one longer)")


def tensor_split(input, indices_or_sections, dim=0):
    check_tensor(input, "tensor_split")
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor "
                           "with 0 dims")
    d = norm_dim(dim, input.dim(), "tensor_split")
    size = input.shape[d]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec.dtype is not D.int64 or spec.dim() > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-"
                               "dimensional or one-dimensional tensor of dtype long")
        spec = spec.item() if spec.dim() == 0 else spec.tolist()
    if isinstance(spec, int):
        if spec <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {spec}")
        q, r = divmod(size, spec)
        bounds = [0]
        for i in range(spec):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    else:
        idx = _int_list(spec, "indices", "tensor_split")
        bounds = [0] + [min(max(i + size if i < 0 else i, 0), size) for i in idx] + [size]
    return run(TENSOR_SPLIT, (input,), {"bounds": tuple(bounds), "dim": d})


def _splitter(dim, name):
    def fn(input, indices_or_sections):
        need = {"hsplit": 1, "vsplit": 2, "dsplit": 3}[name]      # hsplit splits 1-d along 0
        if input.dim() < need:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, "
                               f"but got a tensor with {input.dim()} dimensions!")
        d = 1 if dim == 1 and input.dim() > 1 else 0 if dim == 1 else dim
        if isinstance(indices_or_sections, int) and (
                not indices_or_sections or input.shape[d] % indices_or_sections):
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the size "
                               f"of the dimension {input.shape[d]} is not divisible by the split_size "
                               f"{indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    fn.__name__ = fn.__qualname__ = name
    return fn


hsplit = _splitter(1, "hsplit")
vsplit = _splitter(0, "vsplit")
dsplit = _splitter(2, "dsplit")


def _flip_method(self, *dims):
    """Tensor.flip(*dims) takes the dims as varargs too (x.flip(0, 1), x.flip(-1))."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    return flip(self, tuple(dims))


METHODS = {"flip": _flip_method, "fliplr": fliplr, "flipud": flipud, "roll": roll, "repeat": repeat,
           "tile": tile, "repeat_interleave": repeat_interleave, "tril": tril, "triu": triu,
           "tril_": tril_, "triu_": triu_, "diag": diag, "diag_embed": diag_embed,
           "tensor_split": tensor_split, "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit}
