"""Shape, scatter and selection ops of PyTorch's set written over views, cat, sort and
index ops: rot90, diff, diagflat, the *_scatter family, index_copy, index_reduce, put,
renorm, constant_pad_nd, trapezoid / cumulative_trapezoid, histc, mode, quantile,
nanquantile, isin, fill, top-level softmax / log_softmax, and the *_copy forms of views."""
from __future__ import annotations

import math
import operator

from .. import _dtype as D
from .._run import same_place
from .._shape import norm_dim
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ._composite import composite, inplace_variant, run
from ._out import takes_out
from ._bare_support import check_op as bare_check


def _tensor(x, name, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(x).__name__}")


# -- rot90, diff, diagflat -------------------------------------------------------------------

def rot90(input, k=1, dims=(0, 1)):
    _tensor(input, "input", "rot90")
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.dim()}")
    d0, d1 = (norm_dim(d, input.dim(), "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 1:
        return input.flip([d1]).transpose(d0, d1)
    if k == 2:
        return input.flip([d0, d1])
    if k == 3:
        return input.flip([d0]).transpose(d0, d1)
    return input.clone()


@takes_out("diff", dtype="exact")
def diff(input, n=1, dim=-1, prepend=None, append=None):
    _tensor(input, "input", "diff")
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = norm_dim(dim, input.dim(), "diff")
    if n == 0:                        # PyTorch ignores prepend / append then
        return input.clone()
    parts = [p for p in (prepend, input, append) if p is not None]
    if len(parts) > 1:
        parts = [p if isinstance(p, Tensor) else
                 creation.full(input.shape[:d] + (1,) + input.shape[d + 1:], p, dtype=input.dtype,
                           device=input.device) for p in parts]
        x = memory.cat(parts, d)
    else:
        x = input
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        a, b = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = a ^ b if x.dtype is D.bool_ else a - b
    return x


def diagflat(input, offset=0):
    _tensor(input, "input", "diagflat")
    return shape_ops.diag(input.reshape(-1), offset)


def ravel(input):
    _tensor(input, "input", "ravel")
    return input.reshape(-1)


# -- the *_scatter family ------------------------------------------------------------------

def _scatter_row(name, view, doc, signature):
    """out = input with view(out) replaced by src; gradients: input's outside the view,
    src's the view of the gradient."""
    def decomp(x, src, **p):
        out = x.clone()
        view(out, **p).copy_(src)
        return out

    def grad(g, src, **p):
        return (run(op, (g, creation.zeros_like(src)), p), view(g, **p))
    grad.__signature__ = None
    op = composite(name, decomp, kind="indexing", args=("x", "src"), signature=signature, doc=doc,
                   grad=_named_grad(grad, name))
    return op


def _named_grad(grad, name):
    params = {"diagonal_scatter": ("offset", "dim1", "dim2"), "select_scatter": ("dim", "index"),
              "slice_scatter": ("dim", "start", "end", "step")}[name]
    ns = {"grad": grad}
    src = f"def rule(g, src, {', '.join(params)}):\n" \
          f"    return grad(g, src, {', '.join(f'{p}={p}' for p in params)})\n"
    exec(src, ns)       # noqa: S102  (a rule names its parameters; the registry reads them)
    return ns["rule"]


def _diag_view(t, offset, dim1, dim2):
    return t.diagonal(offset, dim1, dim2)


def _select_view(t, dim, index):
    return t.select(dim, index)


def _slice_view(t, dim, start, end, step):
    idx = [slice(None)] * t.dim()
    idx[dim] = slice(start, end, step)
    return t[tuple(idx)]


DIAGONAL_SCATTER = _scatter_row("diagonal_scatter", _diag_view,
                                "input with its diagonal replaced by src",
                                "diagonal_scatter(x, src, offset=0, dim1=0, dim2=1)")
SELECT_SCATTER = _scatter_row("select_scatter", _select_view,
                              "input with x.select(dim, index) replaced by src",
                              "select_scatter(x, src, dim, index)")
SLICE_SCATTER = _scatter_row("slice_scatter", _slice_view,
                             "input with the slice start:end:step of dim replaced by src",
                             "slice_scatter(x, src, dim=0, start=None, end=None, step=1)")


def _check_src(name, view, src):
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"{name}: expected src to have a size equal to the slice of self. src "
                           f"size = {list(src.shape)}, slice size = {list(view.shape)}")


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    _tensor(input, "input", "diagonal_scatter")
    _check_src("diagonal_scatter", input.diagonal(offset, dim1, dim2), src)
    p = {"offset": offset, "dim1": norm_dim(dim1, input.dim(), "diagonal_scatter"),
         "dim2": norm_dim(dim2, input.dim(), "diagonal_scatter")}
    return run(DIAGONAL_SCATTER, (input, src), p)


def select_scatter(input, src, dim, index):
    _tensor(input, "input", "select_scatter")
    d = norm_dim(dim, input.dim(), "select_scatter")
    _check_src("select_scatter", input.select(d, index), src)
    return run(SELECT_SCATTER, (input, src), {"dim": d, "index": index})


@takes_out("slice_scatter", dtype="exact")
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    _tensor(input, "input", "slice_scatter")
    d = norm_dim(dim, input.dim(), "slice_scatter")
    _check_src("slice_scatter", _slice_view(input, d, start, end, step), src)
    return run(SLICE_SCATTER, (input, src), {"dim": d, "start": start, "end": end, "step": step})


# -- index_copy, index_reduce, put ---------------------------------------------------------------

def _index_copy(x, index, src, dim):
    out = x.clone()
    if x.dim() == 0:
        out.copy_(src.reshape(()))
        return out
    idx = (slice(None),) * dim + (index,)
    out[idx] = src
    return out


INDEX_COPY = composite(
    "index_copy", _index_copy, kind="indexing", args=("x", "index", "src"),
    grad=lambda g, index, dim: (g.index_fill(dim, index, 0), None,
                                g.index_select(dim, index) if g.dim() else g.reshape(1)),
    signature="index_copy(x, dim, index, src)", doc="x with the slices of dim at index replaced "
    "by src's")


@takes_out("index_copy", dtype="exact")
def index_copy(input, dim, index, source):
    _tensor(input, "input", "index_copy")
    if input._dtype.bare:
        bare_check("index_copy", input._dtype)
    if index.dim() > 1:
        raise IndexError("index_copy_(): Index should have dimension 1 or 0 (got "
                         f"{index.dim()})")
    if index.dtype is not D.int64:
        raise RuntimeError("index_copy_(): Expected a long tensor for index, but got "
                           f"{index.dtype.pt_name}")
    if source.dtype is not input.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {input.dtype.pt_name} and (source) {source.dtype.pt_name}")
    same_place("index_copy", (input, index, source))
    d = norm_dim(dim, max(input.dim(), 1), "index_copy")
    idx = index.reshape(-1)
    if input.dim() == 0:
        src = source.reshape(1)
    else:
        src = source if source.dim() else source.reshape(1)
    return run(INDEX_COPY, (input, idx, src), {"dim": d})


@takes_out("index_reduce", dtype="exact")
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    _tensor(input, "input", "index_reduce")
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = norm_dim(dim, max(input.dim(), 1), "index_reduce")
    if input.dim() == 0:
        return index_reduce(input.reshape(1), 0, index, source.reshape(1), reduce,
                            include_self=include_self).reshape(())
    shape = [1] * source.dim()
    shape[d] = -1
    idx = index.reshape(shape).expand(source.shape)
    return input.scatter_reduce(d, idx, source, reduce, include_self=include_self)


def _put(x, index, src, accumulate):
    flat = x.reshape(-1).clone()
    n = flat.shape[0]
    idx = pointwise.where(index < 0, index + n, index)
    flat = flat.index_put((idx,), src, accumulate=accumulate)
    return flat.reshape(x.shape)


def _put_grad(g, index, accumulate):
    gf = g.reshape(-1)
    n = gf.shape[0]
    idx = pointwise.where(index < 0, index + n, index)
    gx = g if accumulate else gf.index_fill(0, idx, 0).reshape(g.shape)
    return gx, None, gf[idx]


PUT = composite("put", _put, kind="indexing", args=("x", "index", "src"), grad=_put_grad,
                signature="put(x, index, src, accumulate=False)",
                doc="x flattened, with the elements at index set to (or, accumulating, "
                    "increased by) src")


def put(input, index, source, accumulate=False):
    _tensor(input, "input", "put")
    if index.dtype is not D.int64:
        raise RuntimeError("put_(): Expected a long tensor for index, but got "
                           f"{index.dtype.pt_name}")
    if source.dtype is not input.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {input.dtype.pt_name} and source.dtype = "
                           f"{source.dtype.pt_name}")
    same_place("put", (input, index, source))
    if index.numel() != source.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source.numel()}, "
                           f"index.numel() = {index.numel()}")
    n = input.numel()
    if index.numel() and (bool((index >= n).any()) or bool((index < -n).any())):
        raise IndexError(f"put_(): index out of range for a tensor of {n} elements")
    return run(PUT, (input, index.reshape(-1), source.reshape(-1)), {"accumulate": accumulate})


# -- renorm, constant_pad_nd --------------------------------------------------------------

def _renorm(x, p, dim, maxnorm):
    from .norms import vector_norm
    others = [i for i in range(x.dim()) if i != dim]
    norm = vector_norm(x, p, dim=others, keepdim=True) if others else x.abs()
    factor = pointwise.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return x * factor


def _renorm_grad(g, x, p, dim, maxnorm):
    """PyTorch's renorm_backward: g itself where the slice's norm is within maxnorm (a
    NaN norm too: the decomposition's where gave NaN there, 0 * d norm)."""
    from .norms import _vector_norm_grad, vector_norm
    dims = tuple(i for i in range(x.dim()) if i != dim)
    norm = vector_norm(x, p, dim=dims, keepdim=True)
    nb = _vector_norm_grad((x * g).sum(dims, keepdim=True), x, norm, p, dims, True)
    invnorm = 1 / (norm + 1e-7)
    return pointwise.where(norm > maxnorm, maxnorm * invnorm * (g - invnorm * nb), g)


RENORM = composite("renorm", _renorm, kind="reduction", dtypes="floating", grad=_renorm_grad,
                   signature="renorm(x, p, dim, maxnorm)",
                   doc="each slice along dim scaled to p-norm at most maxnorm")


@takes_out("renorm", dtype="exact")
def renorm(input, p, dim, maxnorm):
    _tensor(input, "input", "renorm")
    if input.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} "
                           f"dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = norm_dim(dim, input.dim(), "renorm")
    if input.dtype.is_complex:      # the decomposition's derivative (PyTorch's is NaN at p=inf)
        return _renorm(input, p, d, maxnorm)
    return run(RENORM, (input,), {"p": p, "dim": d, "maxnorm": maxnorm})


def constant_pad_nd(input, pad, value=0):
    _tensor(input, "input", "constant_pad_nd")
    pad = [operator.index(p) for p in pad]
    if len(pad) % 2 or len(pad) // 2 > input.dim():
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    x = input
    for i in range(len(pad) // 2):
        d = input.dim() - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo < 0:
            x = x.narrow(d, -lo, x.shape[d] + lo)
        if hi < 0:
            x = x.narrow(d, 0, x.shape[d] + hi)
        parts = []
        for n in (max(lo, 0), max(hi, 0)):
            shape = list(x.shape)
            shape[d] = n
            parts.append(creation.full(shape, value, dtype=x.dtype, device=x.device))
        x = memory.cat([parts[0], x, parts[1]], d)
    return x if x is not input else input.clone()


# -- trapezoid ----------------------------------------------------------------------------------

def _spacing(y, x, dx, d):
    if x is None:
        return dx
    if x.dim() == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[d] = -1
        x = x.reshape(shape)
        return diff(x, dim=d)
    return diff(x, dim=d if x.dim() == y.dim() else -1)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    _tensor(y, "y", "trapezoid")
    d = norm_dim(dim, y.dim(), "trapezoid")
    n = y.shape[d]
    if n == 0:
        return creation.zeros(y.shape[:d] + y.shape[d + 1:], dtype=y.dtype if
                          y.dtype.is_floating_point else D.get_default_dtype(), device=y.device)
    if isinstance(x, Tensor):
        h = _spacing(y, x, None, d)
        return ((y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) * h).sum(d) / 2
    step = 1 if dx is None else dx
    if isinstance(x, (int, float)):
        step = x
    return (y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * step


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    _tensor(y, "y", "cumulative_trapezoid")
    d = norm_dim(dim, y.dim(), "cumulative_trapezoid")
    n = y.shape[d]
    if n == 0:
        return y.narrow(d, 0, 0).to(y.dtype if y.dtype.is_floating_point else
                                    D.get_default_dtype())
    pair = (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) / 2
    if isinstance(x, Tensor):
        return (pair * _spacing(y, x, None, d)).cumsum(d)
    step = x if isinstance(x, (int, float)) else 1 if dx is None else dx
    return (pair * step).cumsum(d)


# -- histc, mode, quantile, isin ------------------------------------------------------------------

@takes_out("histc", dtype="exact")
def histc(input, bins=100, min=0, max=0):
    _tensor(input, "input", "histc")
    if input._dtype.bare:
        bare_check("histc", input._dtype)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{input.dtype.pt_name}'")
    if bins <= 0:
        raise RuntimeError("torch.histc(): bins must be > 0, but got " f"{bins} for bins")
    if max < min:
        raise RuntimeError("max must be larger than min")
    x = input.reshape(-1)
    lo, hi = float(min), float(max)
    if lo == hi and x.numel():
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc(): range of [{lo}, {hi}] is not finite")
    with no_grad():
        keep = x[(x >= lo) & (x <= hi)]
        pos = ((keep.to(D.float64) - lo) * bins / (hi - lo)).to(D.int64).clamp(0, bins - 1)
        counts = counting.bincount(pos, minlength=bins)
    return counts.to(input.dtype)


def _mode(x):
    """(values, indices) along the last dim of x: the most frequent value (ties: the
    smallest), at its last position, as PyTorch's CPU kernel."""
    eq = x.unsqueeze(-1) == x.unsqueeze(-2)
    count = eq.sum(-1)
    best = count.amax(-1, keepdim=True)
    big = creation.full((), math.inf, dtype=x.dtype, device=x.device) if x.dtype.is_floating_point \
        else creation.full((), D.iinfo(x.dtype).max if x.dtype is not D.bool_ else True,
                       dtype=x.dtype, device=x.device)
    value = pointwise.where(count == best, x, big).amin(-1, keepdim=True)
    pos = creation.arange(x.shape[-1], device=x.device).expand(x.shape)
    index = pointwise.where(x == value, pos, -1).amax(-1, keepdim=True)
    return index


@takes_out("mode", dtype="exact")
def mode(input, dim=-1, keepdim=False):
    _tensor(input, "input", "mode")
    from ..return_types import mode as ret
    if input.dim() == 0:
        return ret(input.clone(), creation.zeros((), dtype=D.int64, device=input.device))
    d = norm_dim(dim, input.dim(), "mode")
    if input.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    x = input.movedim(d, -1)
    with no_grad():
        index = _mode(x.detach())
    values = x.gather(-1, index)
    values, index = values.movedim(-1, d), index.movedim(-1, d)
    if not keepdim:
        values, index = values.squeeze(d), index.squeeze(d)
    return ret(values, index)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, name):
    _tensor(input, "input", name)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest. Got {interpolation}")
    scalar_q = not isinstance(q, Tensor)
    qt = creation.tensor([float(q)], dtype=input.dtype, device=input.device) if scalar_q else q
    if not scalar_q:
        if qt.dim() > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if qt.dtype is not input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        scalar_q = qt.dim() == 0
        qt = qt.reshape(-1)
    if qt.numel() and (bool((qt < 0).any()) or bool((qt > 1).any())):
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if dim is None:
        x = input.reshape(-1)
        d = 0
    else:
        d = norm_dim(dim, max(input.dim(), 1), name)
        x = input if input.dim() else input.reshape(1)
    if x.shape[d] == 0 and x.numel() == 0 and dim is None:
        raise IndexError(f"{name}() input tensor must be non-empty")
    x = x.movedim(d, -1)
    s = x.sort(-1).values                     # NaN last
    n = s.shape[-1]
    nan = s != s
    if ignore_nan:
        valid = (~nan).sum(-1, keepdim=True).to(s.dtype)
    else:
        valid = pointwise.where(nan.any(-1, keepdim=True), float(n), float(n)).to(s.dtype)
    last = (valid - 1).clamp(min=0)
    rank = qt * last                          # (..., len(q))
    if not ignore_nan:
        rank = pointwise.where(nan.any(-1, keepdim=True), float(n - 1), rank)
    if interpolation == "lower":
        rank = rank.floor()
    elif interpolation == "higher":
        rank = rank.ceil()
    elif interpolation == "nearest":
        rank = rank.round()
    lo = rank.floor().clamp(0, max(n - 1, 0)).to(D.int64)
    hi = rank.ceil().clamp(0, max(n - 1, 0)).to(D.int64)
    vlo, vhi = s.gather(-1, lo), s.gather(-1, hi)
    if interpolation == "midpoint":
        r = vlo + (vhi - vlo) * 0.5
    elif interpolation == "linear":
        r = pointwise.lerp(vlo, vhi, (rank - lo.to(s.dtype)))
    else:
        r = vlo
    if ignore_nan:
        r = pointwise.where(valid == 0, math.nan, r)
    r = r.movedim(-1, 0)                      # (len(q), ...)
    if keepdim:
        if dim is None:
            r = r.reshape((r.shape[0],) + (1,) * input.dim())
        else:
            r = r.unsqueeze(d + 1) if input.dim() else r
    return r.squeeze(0) if scalar_q else r


@takes_out("quantile", "exact")
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile")


@takes_out("nanquantile", "exact")
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile")


@takes_out("isin", dtype="cast")
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): at least one of elements and test_elements must be a Tensor")
    ref = elements if isinstance(elements, Tensor) else test_elements
    e = elements if isinstance(elements, Tensor) else creation.tensor(elements, device=ref.device)
    t = test_elements if isinstance(test_elements, Tensor) else \
        creation.tensor(test_elements, device=ref.device)
    hit = (e.unsqueeze(-1) == t.reshape(-1)).any(-1) if t.numel() else \
        creation.zeros(e.shape, dtype=D.bool_, device=e.device)
    return ~hit if invert else hit


# -- fill, softmax, the copies of views ------------------------------------------------------
# (torch.fill is a public form of the "fill" row of memory.py)

def fill(input, value):
    _tensor(input, "input", "fill")
    if isinstance(value, Tensor):
        if value.dim():
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.dim()} dimensions.")
        return creation.zeros_like(input) + value.to(input.dtype)
    return creation.full_like(input, value)


@takes_out("softmax", dtype="exact")
def softmax(input, dim, dtype=None, *, _stacklevel=5):
    from .nn_ops import SOFTMAX
    return SOFTMAX(input if dtype is None else input.to(dtype), dim=dim)


@takes_out("log_softmax", dtype="exact")
def log_softmax(input, dim, dtype=None, *, _stacklevel=5):
    from .nn_ops import LOG_SOFTMAX
    return LOG_SOFTMAX(input if dtype is None else input.to(dtype), dim=dim)


def _copy_of(view_name):
    @takes_out(view_name + "_copy", dtype="exact",
               out_list=("unbind_copy_int_out", 2) if view_name == "unbind" else None)
    def fn(input, *args, **kwargs):
        r = getattr(input, view_name)(*args, **kwargs)
        return tuple(t.clone() for t in r) if isinstance(r, (tuple, list)) else r.clone()
    fn.__name__ = fn.__qualname__ = view_name + "_copy"
    fn.__doc__ = f"{view_name}, copied (no aliasing), as torch.{view_name}_copy."
    return fn


COPIES = {n + "_copy": _copy_of(n) for n in (
    "expand", "permute", "t", "transpose", "unsqueeze", "squeeze", "view", "diagonal",
    "narrow", "unbind", "unfold", "as_strided", "select", "detach")}
COPIES["alias_copy"] = takes_out("alias_copy", dtype="exact")(lambda input: input.clone())


@takes_out("narrow_copy", dtype="exact")
def _narrow_copy(input, dim, start, length):
    """PyTorch's narrow_copy checks dim < ndim before it wraps dim (a RuntimeError there;
    a negative dim out of range is narrow's IndexError)."""
    if isinstance(input, Tensor) and input.dim() and isinstance(dim, int) and dim >= input.dim():
        raise RuntimeError(f"narrow_copy(): Expected dim < {input.dim()} (the number of "
                           f"dimensions of self), but got {dim}")
    return input.narrow(dim, start, length).clone()


COPIES["narrow_copy"] = _narrow_copy


def split_with_sizes(input, split_sizes, dim=0):
    return input.split(list(split_sizes), dim)


@takes_out("split_with_sizes_copy", dtype="exact", out_list=("split_with_sizes_copy_out", 3))
def split_with_sizes_copy(input, split_sizes, dim=0):
    return tuple(t.clone() for t in split_with_sizes(input, split_sizes, dim))


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)


PUBLIC = {"rot90": rot90, "diff": diff, "diagflat": diagflat, "ravel": ravel,
          "diagonal_scatter": diagonal_scatter, "select_scatter": select_scatter,
          "slice_scatter": slice_scatter, "index_copy": index_copy, "index_reduce": index_reduce,
          "put": put, "renorm": renorm, "constant_pad_nd": constant_pad_nd,
          "trapezoid": trapezoid, "trapz": trapz, "cumulative_trapezoid": cumulative_trapezoid,
          "histc": histc, "mode": mode, "quantile": quantile, "nanquantile": nanquantile,
          "isin": isin, "fill": fill, "softmax": softmax, "log_softmax": log_softmax,
          "split_with_sizes": split_with_sizes, "split_with_sizes_copy": split_with_sizes_copy,
          "unsafe_split": lambda input, split_size, dim=0: input.split(split_size, dim),
          "unsafe_chunk": lambda input, chunks, dim=0: input.chunk(chunks, dim),
          **COPIES}
METHODS = {n: PUBLIC[n] for n in (
    "rot90", "diff", "diagflat", "ravel", "diagonal_scatter", "select_scatter", "slice_scatter",
    "index_copy", "index_reduce", "put", "renorm", "histc", "quantile", "nanquantile",
    "split_with_sizes", "unsafe_split", "unsafe_chunk", "mode")}
METHODS.update({
    "index_copy_": inplace_variant(index_copy, "index_copy_"),
    "index_reduce_": inplace_variant(index_reduce, "index_reduce_"),
    "put_": inplace_variant(put, "put_"), "renorm_": inplace_variant(renorm, "renorm_"),
})
LINALG = {"diagonal": linalg_diagonal}


# The op modules this one's derivative rules and decompositions call (at run time
# only). Imported last: they import this module in turn (see docs/architecture.md).
from . import counting, creation, memory, pointwise, shape_ops  # noqa: E402
