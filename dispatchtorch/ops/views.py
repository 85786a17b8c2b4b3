"""View ops: new geometry over the same memory, through the backend's as_strided.

Each view computes (shape, strides, offset) from its input's geometry. Views whose
gradient is "put g back where the view came from" share one rule (geometry), run
on the view's geometry relative to a contiguous input.
"""
from __future__ import annotations

import operator

from .. import _dtype as D
from .._sparse_forms import SparseOperand, call as sparse_call
from .._run import make_view, record, strides_of
from .._shape import as_shape, contiguous_strides, expand_strides, norm_dim, numel
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from ..dispatch.registry import frontend_row
from . import casts, creation, reduction_prims

# -- geometry helpers ----------------------------------------------------------------------


def overlaps(size, stride):
    """Whether two indices of the geometry reach the same element."""
    dims = sorted((st, n) for n, st in zip(size, stride) if n > 1)
    extent = 0
    for st, n in dims:
        if st <= extent:
            return True
        extent += (n - 1) * st
    return False


def infer_shape(shape, n, op="view"):
    shape = tuple(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError(f"{op}: only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"{op}: invalid shape dimension {s}")
    if neg:
        rest = numel(shape[:neg[0]] + shape[neg[0] + 1:])
        if rest == 0 or n % rest:
            raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {n}")
        shape = shape[:neg[0]] + (n // rest,) + shape[neg[0] + 1:]
    if numel(shape) != n:
        raise RuntimeError(f"{op}: shape '{list(shape)}' is invalid for input of size {n}")
    return shape


def view_strides(shape, stride, new_shape):
    """Strides viewing (shape, stride) as new_shape without a copy, or None
    (PyTorch's computeStride)."""
    if numel(shape) == 0 or not shape:
        return contiguous_strides(new_shape)
    if not shape:                       # a 0-d tensor views as any shape of one element
        return (1,) * len(new_shape)
    new = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = stride[-1] if stride else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[tensor_d]
        if tensor_d == 0 or (shape[tensor_d - 1] != 1 and
                             stride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = stride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new)


def _dense(g):
    """g as a fresh contiguous storage (so geometry relative to it is meaningful)."""
    if g._storage is None and g._stride is None:
        return g
    return casts.clone(g, memory_format="contiguous")


# -- the two ops everything else reduces to in backward ---------------------------------------

def _as_strided_grad(g, size, stride, storage_offset, input_shape):
    return view_scatter(creation.zeros(input_shape, dtype=g.dtype, device=g.device), g,
                        size, stride, storage_offset)


def _view_scatter_grad(g, size, stride, storage_offset, needs):
    g = _dense(g)
    accumulate = overlaps(size, stride)
    g_base = g if accumulate else view_scatter(g, creation.zeros(size, dtype=g.dtype, device=g.device),
                                              size, stride, storage_offset) if needs[0] else None
    g_src = as_strided(g, size, stride, storage_offset) if needs[1] else None
    return g_base, g_src


AS_STRIDED = frontend_row(
    "as_strided", kind="view", grad=_as_strided_grad,
    signature="as_strided(x, size, stride, storage_offset=None)",
    doc="a view with the given geometry over x's storage")
VIEW_SCATTER = frontend_row(
    "as_strided_scatter", kind="memory", args=("x", "src"), grad=_view_scatter_grad,
    signature="as_strided_scatter(x, src, size, stride, storage_offset)",
    doc="a copy of x (contiguous) with the view (size, stride, storage_offset) replaced by src; "
        "where the view overlaps itself, src is summed in")


def as_strided(input, size, stride, storage_offset=None):
    size = tuple(operator.index(s) for s in size)
    stride = tuple(operator.index(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"as_strided: mismatch in length of strides and shape ({len(stride)} "
                           f"vs {len(size)})")
    if any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise RuntimeError("as_strided: negative sizes and strides are not supported")
    offset = input._offset if storage_offset is None else operator.index(storage_offset)
    _check_in_storage(input, size, stride, offset)
    v = make_view(input, size, stride, offset)
    if STATE.enabled and input._rg:
        if input._stride is not None and not input.is_contiguous() or input._offset:
            return _as_strided_general(input, v, size, stride, offset)
        record(AS_STRIDED, (input,), {"size": size, "stride": stride, "storage_offset": offset,
                                      "input_shape": input._shape}, (v,))
    return v


def _check_in_storage(t, size, stride, offset):
    root = t._base if t._base is not None else t
    capacity = numel(root._shape)
    if numel(size) and offset + sum((n - 1) * s for n, s in zip(size, stride)) >= capacity:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                           f"{offset} require more memory than the storage holds ({capacity} elements)")


def _as_strided_general(x, v, size, stride, offset):
    """as_strided of a non-contiguous input under autograd: gather by storage position."""
    root = x._base if x._base is not None else x
    n = numel(root._shape)
    pos = make_view(creation.arange(n, device=x.device), size, stride, offset)
    x_pos = make_view(creation.arange(n, device=x.device), x._shape, strides_of(x), x._offset)
    # where each storage position sits in x (x never overlaps itself)
    where = creation.full((n,), -1, dtype=D.int64, device=x.device)
    where[x_pos.reshape(-1)] = creation.arange(x.numel(), device=x.device)
    flat_index = where[pos.reshape(-1)]
    if bool((flat_index < 0).any()):
        raise RuntimeError("as_strided: under autograd the view may only reach elements of its input")
    return x.reshape(-1)[flat_index].reshape(size)


def view_scatter(base, src, size, stride, storage_offset=None):
    """as_strided_scatter: differentiable in base and src."""
    if not isinstance(src, Tensor):
        raise TypeError("as_strided_scatter: src must be a Tensor")
    size, stride = tuple(size), tuple(stride)           # lists too, as PyTorch's
    storage_offset = 0 if storage_offset is None else storage_offset
    _check_in_storage(base, size, stride, storage_offset)
    out = casts.clone(base, memory_format="contiguous")
    if out._storage is not None or out._offset:
        out = _dense(out)
    with_grad = STATE.enabled
    STATE.enabled = False
    try:
        region = make_view(out, size, stride, storage_offset)
        if overlaps(size, stride):
            flat = make_view(out, (numel(out._shape),), (1,), 0)
            pos = make_view(creation.arange(numel(out._shape), device=out.device), size, stride,
                            storage_offset)
            flat.index_add_(0, pos.reshape(-1), src.to(out.dtype).expand(size).reshape(-1))
        else:
            region.copy_(src)
    finally:
        STATE.enabled = with_grad
    if with_grad and (base._rg or src._rg):
        record(VIEW_SCATTER, (base, src),
               {"size": size, "stride": stride, "storage_offset": storage_offset}, (out,))
    return out


# -- view ops with rules of their own ----------------------------------------------------------

def _reshape_grad(g, input_shape):
    return g.reshape(input_shape)


def _permute_grad(g, dims):
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return g.permute(inverse)


def _expand_grad(g, input_shape):
    return reduction_prims.sum_to(g, input_shape)


VIEW = frontend_row("view", kind="view", grad=_reshape_grad,
                    signature="view(x, *shape)", doc="same data, new shape (no copy)")
PERMUTE = frontend_row("permute", kind="view", grad=_permute_grad,
                       signature="permute(x, dims)", doc="reorder dimensions (no copy)")
EXPAND = frontend_row("expand", kind="view", grad=_expand_grad,
                      signature="expand(x, *sizes)", doc="broadcast size-1 dims (stride 0)")
SLICE = frontend_row("slice", kind="view", grad=_as_strided_grad,
                     signature="x[index] (basic), narrow, select, diagonal, unfold",
                     doc="a strided sub-view")


def _view_with(op, x, shape, stride, offset, params):
    v = make_view(x, shape, stride, offset)
    if STATE.enabled and x._rg:
        record(op, (x,), params, (v,))
    return v


def _sub_view(x, shape, stride, offset, logical):
    """A sub-view (slicing family); `logical(shape, strides, offset)` recomputes the same
    selection on a contiguous input, which is what the gradient scatters into."""
    v = make_view(x, shape, stride, offset)
    if STATE.enabled and x._rg:
        ls, lst, loff = logical(x._shape, contiguous_strides(x._shape), 0)
        record(SLICE, (x,), {"size": ls, "stride": lst, "storage_offset": loff,
                             "input_shape": x._shape}, (v,))
    return v


def view(input, *shape, dtype=None):
    if dtype is not None or (len(shape) == 1 and isinstance(shape[0], D.dtype)):
        if dtype is None:
            dtype = shape[0]
        elif shape or not isinstance(dtype, D.dtype):
            raise TypeError(f"view() received an invalid combination of arguments - got "
                            f"{_got(shape, dtype)}, but expected one of:\n * (torch.dtype dtype)\n"
                            f" * (tuple of ints size)\n")
        from .view_dtype import view_dtype
        return view_dtype(input, dtype)
    if any(isinstance(s, (D.dtype, str)) for s in shape):
        raise TypeError(f"view() received an invalid combination of arguments - got "
                        f"{_got(shape, None)}, but expected one of:\n * (torch.dtype dtype)\n"
                        f" * (tuple of ints size)\n")
    shape = infer_shape(_sizes(shape, "view"), numel(input._shape), "view")
    if shape == input._shape:
        return _view_with(VIEW, input, shape, strides_of(input), input._offset,
                          {"input_shape": input._shape})
    st = view_strides(input._shape, strides_of(input), shape)
    if st is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    return _view_with(VIEW, input, shape, st, input._offset, {"input_shape": input._shape})


def reshape(input, *shape):
    shape = infer_shape(_sizes(shape, "reshape"), numel(input._shape), "reshape")
    st = view_strides(input._shape, strides_of(input), shape)
    if st is None:
        return view(casts.clone(input, memory_format="contiguous"), shape)
    return _view_with(VIEW, input, shape, st, input._offset, {"input_shape": input._shape})


def _got(shape, dtype):
    """PyTorch's `got (...)` list of the argument types it could not match."""
    names = ["torch.dtype" if isinstance(s, D.dtype) else type(s).__name__ for s in shape]
    if dtype is not None:
        names.append("dtype=" + ("torch.dtype" if isinstance(dtype, D.dtype)
                                 else type(dtype).__name__))
    return "(" + ", ".join(names) + ")"


def view_as(input, other):
    return view(input, other._shape)


def reshape_as(input, other):
    return reshape(input, other._shape)


_sizes = as_shape


def permute(input, *dims):
    dims = _sizes(dims, "permute")
    n = len(input._shape)
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not "
                           f"match the length of the desired ordering of dimensions i.e. input.dim() "
                           f"= {n} is not equal to len(dims) = {len(dims)}")
    dims = tuple(norm_dim(d, n, "permute") for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    st = strides_of(input)
    return _view_with(PERMUTE, input, tuple(input._shape[d] for d in dims),
                      tuple(st[d] for d in dims), input._offset, {"dims": dims})


def transpose(input, dim0, dim1):
    try:
        n = len(input._shape)
    except SparseOperand as exc:        # a sparse COO input (dispatchtorch.sparse)
        return sparse_call("transpose", exc, (input, dim0, dim1), {})
    dim0 = _int_arg(dim0, "transpose", "dim0", 1)
    dim1 = _int_arg(dim1, "transpose", "dim1", 2)
    if n == 0:
        norm_dim(dim0, 0, "transpose"), norm_dim(dim1, 0, "transpose")
        return _view_with(PERMUTE, input, (), (), input._offset, {"dims": ()})
    d0, d1 = norm_dim(dim0, n, "transpose"), norm_dim(dim1, n, "transpose")
    dims = list(range(n))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return permute(input, dims)


def t(input):
    try:
        n = len(input._shape)
    except SparseOperand as exc:
        return sparse_call("t", exc, (input,), {})
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return input if n < 2 else transpose(input, 0, 1)


def movedim(input, source, destination):
    n = len(input._shape)
    for what, v in (("source", source), ("destination", destination)):
        if not isinstance(v, (int, tuple, list)) or isinstance(v, bool):
            raise TypeError(f"movedim(): argument '{what}' must be int or tuple of ints, not "
                            f"{type(v).__name__}")
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should "
                           f"contain the same number of dims as destination ({dst} dims)")
    src_given, dst_given = src, dst
    src = [norm_dim(d, n, "movedim") for d in src]
    dst = [norm_dim(d, n, "movedim") for d in dst]
    for what, given, dims in (("source", src_given, src), ("destination", dst_given, dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{what}` ({list(given)})")
    if n == 0:
        return permute(input, ())
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    order = [o if o is not None else next(rest) for o in order]
    return permute(input, order)


def expand(input, *sizes):
    sizes = _sizes(sizes, "expand")
    n = len(input._shape)
    if len(sizes) < n:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(input._shape)}}}, size={list(sizes)}): "
                           f"the number of sizes provided ({len(sizes)}) must be greater or equal to "
                           f"the number of dimensions in the tensor ({n})")
    lead = len(sizes) - n
    target = tuple(input._shape[i - lead] if s == -1 and i >= lead else s
                   for i, s in enumerate(sizes))
    if any(s < 0 for s in target):
        raise RuntimeError(f"expand: -1 is not allowed in a leading, non-existing dimension; got "
                           f"{list(sizes)}")
    if target == input._shape:
        return input
    st = expand_strides(input._shape, strides_of(input), target)
    return _view_with(EXPAND, input, target, st, input._offset, {"input_shape": input._shape})


def expand_as(input, other):
    return expand(input, other._shape)


def broadcast_to(input, size):
    return expand(input, tuple(size))


def squeeze(input, dim=None):
    n = len(input._shape)
    if dim is None:
        dims = {i for i, s in enumerate(input._shape) if s == 1}
    else:
        raw = dim if isinstance(dim, (tuple, list)) else (dim,)
        dims = {norm_dim(d, n, "squeeze") for d in raw}
        dims = {d for d in dims if n and input._shape[d] == 1}
    if not dims:
        return _view_with(VIEW, input, input._shape, strides_of(input), input._offset,
                          {"input_shape": input._shape})
    st = strides_of(input)
    shape = tuple(s for i, s in enumerate(input._shape) if i not in dims)
    stride = tuple(s for i, s in enumerate(st) if i not in dims)
    return _view_with(VIEW, input, shape, stride, input._offset, {"input_shape": input._shape})


def unsqueeze(input, dim):
    n = len(input._shape)
    d = norm_dim(dim, n + 1, "unsqueeze")
    st = strides_of(input)
    new_st = st[d] * input._shape[d] if d < n else 1
    shape = input._shape[:d] + (1,) + input._shape[d:]
    stride = st[:d] + (new_st,) + st[d:]
    return _view_with(VIEW, input, shape, stride, input._offset, {"input_shape": input._shape})


def flatten(input, start_dim=0, end_dim=-1):
    n = len(input._shape)
    start_dim = _int_arg(start_dim, "flatten", "start_dim", 1)
    end_dim = _int_arg(end_dim, "flatten", "end_dim", 2)
    if n == 0:
        norm_dim(start_dim, 0, "flatten")
        norm_dim(end_dim, 0, "flatten")
        return reshape(input, (1,))
    s, e = norm_dim(start_dim, n, "flatten"), norm_dim(end_dim, n, "flatten")
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input._shape[:s] + (numel(input._shape[s:e + 1]),) + input._shape[e + 1:]
    return reshape(input, shape)


def unflatten(input, dim, sizes):
    n = len(input._shape)
    if n == 0:
        norm_dim(dim, 0, "unflatten")
        raise RuntimeError(f"unflatten got an unexpected error:\nDimension specified as {dim} but "
                           f"tensor has no dimensions")
    d = norm_dim(dim, n, "unflatten")
    sizes = infer_shape(tuple(sizes), input._shape[d], "unflatten")
    return reshape(input, input._shape[:d] + sizes + input._shape[d + 1:])


# -- sub-views -----------------------------------------------------------------------------------

def _int_arg(v, op, name, pos):
    """An int argument as PyTorch's parser takes it (bool, float and str refused)."""
    if isinstance(v, bool) or not isinstance(v, int):
        try:
            if isinstance(v, (bool, float, str)) or v is None:
                raise TypeError
            return operator.index(v)
        except TypeError:
            raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be int, not "
                            f"{type(v).__name__}") from None
    return v


def narrow(input, dim, start, length):
    n = len(input._shape)
    dim = _int_arg(dim, "narrow", "dim", 1)
    length = _int_arg(length, "narrow", "length", 3)
    if n == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = norm_dim(dim, n, "narrow")
    size = input._shape[d]
    if isinstance(start, Tensor) and (start.dim() or start.dtype.is_floating_point or
                                      start.dtype is D.bool_):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    start = operator.index(start)
    if not -size <= start <= size:
        raise IndexError(f"narrow(): start out of range (expected to be in range of [{-size}, "
                         f"{size}], but got {start})")
    if start < 0:
        start += size
    if not 0 <= start <= size or start + length > size:
        raise RuntimeError(f"narrow(): start ({start}) + length ({length}) exceeds dimension size ({size}).")

    def geo(shape, st, off):
        return shape[:d] + (length,) + shape[d + 1:], st, off + start * st[d]
    return _sub_view(input, *geo(input._shape, strides_of(input), input._offset), geo)


def select(input, dim, index):
    n = len(input._shape)
    dim = _int_arg(dim, "select", "dim", 1)
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = norm_dim(dim, n, "select")
    size = input._shape[d]
    i = operator.index(index)
    if not -size <= i < size:
        raise IndexError(f"select(): index {i} out of range for tensor of size "
                         f"{list(input._shape)} at dimension {d}")
    i = i + size if i < 0 else i

    def geo(shape, st, off):
        return shape[:d] + shape[d + 1:], st[:d] + st[d + 1:], off + i * st[d]
    return _sub_view(input, *geo(input._shape, strides_of(input), input._offset), geo)


def diagonal(input, offset=0, dim1=0, dim2=1):
    n = len(input._shape)
    offset = _int_arg(offset, "diagonal", "offset", 1)
    dim1 = _int_arg(dim1, "diagonal", "dim1", 2)
    dim2 = _int_arg(dim2, "diagonal", "dim2", 3)
    d1, d2 = norm_dim(dim1, n, "diagonal"), norm_dim(dim2, n, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")

    def geo(shape, st, off):
        if offset >= 0:
            length = max(0, min(shape[d1], shape[d2] - offset))
            off2 = off + offset * st[d2] if length else off
        else:
            length = max(0, min(shape[d1] + offset, shape[d2]))
            off2 = off - offset * st[d1] if length else off
        keep = [i for i in range(len(shape)) if i not in (d1, d2)]
        return (tuple(shape[i] for i in keep) + (length,),
                tuple(st[i] for i in keep) + (st[d1] + st[d2],), off2)
    return _sub_view(input, *geo(input._shape, strides_of(input), input._offset), geo)


def unfold(input, dimension, size, step):
    n = len(input._shape)
    d = norm_dim(dimension, n, "unfold") if n else 0
    length = input._shape[d] if n else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")

    def geo(shape, st, off):
        if not shape:
            return (1,), (1,), off
        count = (shape[d] - size) // step + 1
        return (shape[:d] + (count,) + shape[d + 1:] + (size,),
                st[:d] + (st[d] * step,) + st[d + 1:] + (st[d],), off)
    return _sub_view(input, *geo(input._shape, strides_of(input), input._offset), geo)


def split(tensor, split_size_or_sections, dim=0):
    n = len(tensor._shape)
    dim = _int_arg(dim, "split", "dim", 2)
    if n == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if isinstance(split_size_or_sections, int) and split_size_or_sections < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={split_size_or_sections}")
    d = norm_dim(dim, n, "split")
    size = tensor._shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and not (step == 0 and size == 0):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {size}")
        sizes = [min(step, size - s) for s in range(0, size, step)] if step else [0]
    else:
        sizes = [operator.index(s) for s in split_size_or_sections]
        if sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {d}), but got split_sizes={sizes}")
    out, start = [], 0
    for s in sizes:
        out.append(narrow(tensor, d, start, s))
        start += s
    return tuple(out)


def chunk(input, chunks, dim=0):
    chunks = _int_arg(chunks, "chunk", "chunks", 1)
    dim = _int_arg(dim, "chunk", "dim", 2)
    if not input._shape:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0")
    d = norm_dim(dim, len(input._shape), "chunk")
    if input._shape[d] == 0:      # PyTorch: `chunks` empty pieces
        return tuple(narrow(input, d, 0, 0) for _ in range(chunks))
    return split(input, -(-input._shape[d] // chunks), d)


def unbind(input, dim=0):
    dim = _int_arg(dim, "unbind", "dim", 1)
    if not input._shape:
        raise IndexError(f"unbind(): Dimension specified as {dim} but tensor has no dimensions")
    d = norm_dim(dim, len(input._shape), "unbind")
    return tuple(select(input, d, i) for i in range(input._shape[d]))


def _T(self):
    n = len(self._shape)
    return self if n < 2 else permute(self, tuple(range(n - 1, -1, -1)))


def _mT(self):
    if len(self._shape) < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                           "Got 1-D tensor.")
    return transpose(self, -2, -1)


Tensor.T = property(_T)
Tensor.mT = property(_mT)
swapaxes = swapdims = transpose
moveaxis = movedim


# -- in-place view ops: self takes the view's geometry ----------------------------------------------

def _restride_(name, make):
    """t_(), transpose_(), squeeze_(), unsqueeze_(): self becomes the view `make(self)`.
    Under autograd self's old value is kept as a hidden base, so self is then a view of
    it and gradients flow as for the out-of-place view."""
    def method(self, *args):
        from .._inplace import inplace_needs_graph
        graph = inplace_needs_graph(name, (self,))
        if graph and self._base is None:
            root = self.detach()
            root._rg, root._grad_fn, root._out_nr = self._rg, self._grad_fn, self._out_nr
            v = make(root, *args)
        else:
            v = make(self, *args)
        for k in ("_h", "_shape", "_storage", "_offset", "_stride"):
            setattr(self, k, getattr(v, k))
        if graph or self._base is not None:
            self._base, self._view_vc = v._base, v._view_vc
            self._grad_fn, self._out_nr, self._rg = v._grad_fn, v._out_nr, v._rg
        return self
    method.__name__ = method.__qualname__ = name
    return method


t_ = _restride_("t_", t)
transpose_ = swapaxes_ = swapdims_ = _restride_("transpose_", transpose)
squeeze_ = _restride_("squeeze_", squeeze)
unsqueeze_ = _restride_("unsqueeze_", unsqueeze)

METHODS = {"t_": t_, "transpose_": transpose_, "swapaxes_": swapaxes_, "swapdims_": swapdims_,
           "squeeze_": squeeze_, "unsqueeze_": unsqueeze_}
