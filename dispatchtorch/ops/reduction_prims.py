"""The reduction prims every op builds on: the family's row helper, the sum, amax, amin,
argmax and argmin rows (their rules need no other op), their executor, sum and sum_to.

Apart from reductions.py (which re-exports them) because they sit below views (expand's
derivative is sum_to) and gather_scatter (index bounds are amax/amin), while prod's rule
and the composites in reductions.py use scans, flips, gathers and cat (see the ops/
layers in pyproject.toml)."""
from __future__ import annotations

from .. import _dtype as D
from .._sparse_forms import call as sparse_call
from .._run import decompose, kernel_error, mark_inference, record, resolve, storage_of
from .._run import make_view
from .._shape import check_keepdim, norm_dims, reduced_shape
from .._tensor import Tensor
from ..autograd.grad_mode import INFERENCE_REGIONS, STATE
from ..dispatch import DECOMPOSE, OpDef, register_op
from ._args import check_tensor, write_out
from ._bare_support import check_op as bare_check

_new = object.__new__


def expand_back(g, shape, dims, keepdim):
    """g (a reduction's gradient) broadcast back to the input's shape."""
    if not keepdim and len(dims) < len(shape):   # a full reduction's 0-d g expands as is
        for d in dims:
            g = g.unsqueeze(d)
    return g.expand(shape)


def _sum_grad(g, shape, dims, keepdim):
    if not g._shape and shape and not STATE.enabled:
        # a full sum's 0-d gradient without a graph to record: one zero-stride view
        return make_view(g, shape, (0,) * len(shape), g._offset)
    return expand_back(g, shape, dims, keepdim)


def _extreme_grad(g, x, result, dims, keepdim):
    # ties share the gradient evenly, as PyTorch's amax/amin backward
    r = expand_back(result, x.shape, dims, keepdim)
    mask = (x == r).to(g.dtype)
    count = mask.sum(dims, keepdim=True) if x.dim() else mask
    return expand_back(g, x.shape, dims, keepdim) * mask / count


def reduction_meta(x, dims, keepdim, dtype=None):
    """The reduction family's shape rule: the output (shape, dtype) of reducing x over
    dims (a sorted tuple; () = every dim)."""
    return ((_geometry(x._shape, dims, keepdim)[0], dtype or x._dtype),)


def reduction_row(name, grad=None, **row):
    """The reduction family's helper: a reduction prim's row, with the family's shape rule
    (dtypes, signature and doc come from the prim catalogue)."""
    return register_op(OpDef(name, kind="reduction", grad=grad, meta=reduction_meta, **row))


SUM = reduction_row("sum", _sum_grad)
AMAX = reduction_row("amax", _extreme_grad)
AMIN = reduction_row("amin", _extreme_grad)
ARGMAX = reduction_row("argmax")
ARGMIN = reduction_row("argmin")


def reduction_input(x, dims):
    """0-d tensors reduce as shape (1,): kernels always get non-empty dims."""
    if x._shape:
        return x, dims
    return x.reshape(1), (0,)


_GEOMETRY: dict = {}          # (shape, dims, keepdim) -> (out shape, kernel dims, kernel keepdim)


def _geometry(shape, dims, keepdim):
    """Output shape and kernel parameters of a reduction, computed once per geometry."""
    key = (shape, dims, keepdim)
    g = _GEOMETRY.get(key)
    if g is None:
        g = (reduced_shape(shape, dims, keepdim), dims if shape else (0,),
             keepdim and bool(shape))
        if len(_GEOMETRY) > 4096:
            _GEOMETRY.clear()
        _GEOMETRY[key] = g
    return g


def _reduce(op, input, dims, keepdim, out_dtype):
    """Run a reduction prim over normalised dims (a sorted tuple; () = every dim): the
    per-call work is a cached geometry lookup, an allocation and the kernel."""
    g = _GEOMETRY.get((input._shape, dims, keepdim))        # inline: one call less a sum
    out_shape, kdims, kkeep = _geometry(input._shape, dims, keepdim) if g is None else g
    place = input._place
    k = op.kernels.get(place.type)
    if k is None:
        k = resolve(op, place.rt)
    track = STATE.enabled and input._rg and op.differentiable
    if k is DECOMPOSE or (track and op.grad is None):
        return decompose(op, (input,), {"dims": dims, "keepdim": keepdim, "shape": input._shape})
    if input._shape:
        h = input._h
    else:       # 0-d reduces as shape (1,): kernels always get non-empty dims
        h = place.bk.as_strided(storage_of(input), (1,), (1,), input._offset)
    # the reduction specialisation of _run.execute1 (tiny sums are a hot path)
    try:        # allocation inside: out of device memory names the op
        out = place.empty(out_shape, out_dtype.name, place.index)
        k(out, h, dims=kdims, keepdim=kkeep)
    except Exception as exc:
        raise kernel_error(op.name, place.type, (input._dtype,), exc) from exc
    r = _new(Tensor)                # _run.wrap inline
    r._h = out
    r._shape = out_shape
    r._dtype = out_dtype
    r._place = place
    r._stride = None
    if INFERENCE_REGIONS[0] and STATE.inference:
        mark_inference(r)
    if track and out_dtype.is_grad:
        record(op, (input,), {"dims": dims, "keepdim": keepdim, "shape": input._shape}, (r,))
    return r


_ALL_DIMS = [tuple(range(n)) for n in range(65)]


def _dims(input, dim, name):
    if dim is None:
        return _ALL_DIMS[len(input._shape)]
    return norm_dims(dim, input.dim(), name) or _ALL_DIMS[len(input._shape)]


LOWP = (D.float16, D.bfloat16)


def _sum_dtype(x, dtype):
    if dtype is not None:
        return D.to_dtype(dtype)
    return x._dtype if x._dtype.is_grad else D.int64


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if type(input) is not Tensor:
        check_tensor(input, "sum")
        if input.is_sparse:             # a class attribute: dispatchtorch.sparse's sum
            return sparse_call("sum", None, (input, dim, keepdim), {"dtype": dtype, "out": out})
    if dtype is None:
        dt = input._dtype
        if not dt.is_grad:
            dt = D.int64
        elif dt.bare:                   # float8: PyTorch has no sum kernel
            bare_check("sum", dt)
    else:
        dt = D.to_dtype(dtype)
        if input._dtype is not dt:
            input = input.to(dt)
    if keepdim is not False:
        check_keepdim(keepdim, "sum")
    dims = _ALL_DIMS[len(input._shape)] if dim is None else _dims(input, dim, "sum")
    r = _reduce(SUM, input, dims, keepdim, dt)
    return r if out is None else _write(out, r)


def _write(out, r, op="out=", inputs=(), dtype="cast"):
    """out= of a reduction: the result converted to out's dtype, unless dtype says
    otherwise (ops/_out.py)."""
    if out is None:
        return r
    return write_out(out, r, op, inputs, dtype)


# -- undoing broadcasting -------------------------------------------------------------------------

def sum_to(g, shape, op="op"):
    """g summed over the dims that broadcasting added or expanded: the one place
    where broadcasting is undone for every derivative rule."""
    shape = tuple(shape)
    if g._shape == shape:
        return g
    lead = g.dim() - len(shape)
    if lead < 0:
        raise RuntimeError(f"{op}: gradient of shape {list(g._shape)} can't be summed to "
                           f"{list(shape)}")
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and g._shape[lead + i] != 1)
    r = sum(g, dims, keepdim=True) if dims else g
    return r.reshape(shape) if r._shape != shape else r


def sum_to_size(input, *size):
    size = size[0] if len(size) == 1 and not isinstance(size[0], int) else size
    return sum_to(input, tuple(size), "sum_to_size")
