"""torch.gradient (finite differences, ATen's formulas) and torch.histogram /
histogramdd (bin edges as PyTorch computes them, counts by bincount), written over
slices, searchsorted and bincount."""
from __future__ import annotations

import math
import numbers

from .. import _dtype as D
from .._shape import norm_dim
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import counting, creation, memory, pointwise
from ._out import takes_out


def _tensor(x, name, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(x).__name__}")


# -- gradient ---------------------------------------------------------------------------------

def _sl(x, d, start, stop=None):
    n = x.shape[d]
    start = start + n if start < 0 else start
    stop = n if stop is None else stop + n if stop < 0 else stop
    return x.narrow(d, start, stop - start)


def _uniform(f, d, h, edge_order):
    """ATen's gradient_helper_float: central differences, one-sided at the ends."""
    center = (_sl(f, d, 2) - _sl(f, d, 0, -2)) / h / 2
    if edge_order == 1:
        first = (_sl(f, d, 1, 2) - _sl(f, d, 0, 1)) / h
        last = (_sl(f, d, -1) - _sl(f, d, -2, -1)) / h
    else:
        first = (_sl(f, d, 0, 1) * -1.5 + _sl(f, d, 1, 2) * 2 - _sl(f, d, 2, 3) * 0.5) / h
        last = (_sl(f, d, -3, -2) * 0.5 + _sl(f, d, -2, -1) * -2 + _sl(f, d, -1) * 1.5) / h
    return memory.cat([first, center, last], d)


def _coordinates(f, d, x, edge_order):
    """ATen's gradient_helper: second-order differences on the coordinates x."""
    shape = [1] * f.dim()
    shape[d] = -1
    dx = x.diff()
    dx1, dx2 = dx[:-1], dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _sl(f, d, 0, -2) + b * _sl(f, d, 1, -1) + c * _sl(f, d, 2)
    if edge_order == 1:
        first = (_sl(f, d, 1, 2) - _sl(f, d, 0, 1)) / dx[0]
        last = (_sl(f, d, -1) - _sl(f, d, -2, -1)) / dx[-1]
    else:
        h0, h1, g1, g0 = dx[0], dx[1], dx[-2], dx[-1]
        first = (-(2.0 * h0 + h1) / (h0 * (h0 + h1)) * _sl(f, d, 0, 1) +
                 (h0 + h1) / (h0 * h1) * _sl(f, d, 1, 2) +
                 (-h0) / (h1 * (h0 + h1)) * _sl(f, d, 2, 3))
        last = (g0 / (g1 * (g0 + g1)) * _sl(f, d, -3, -2) -
                (g0 + g1) / (g0 * g1) * _sl(f, d, -2, -1) +
                (2 * g0 + g1) / (g0 * (g0 + g1)) * _sl(f, d, -1))
    return memory.cat([first, center, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The derivative estimate along each dim in `dim` (all by default), one tensor per
    dim: `spacing` is a number, one number per dim, or one coordinate tensor per dim."""
    _tensor(input, "input", "gradient")
    dims = list(range(input.dim())) if dim is None else [dim] if isinstance(dim, int) else \
        list(dim)
    dims = [norm_dim(d, input.dim(), "gradient") for d in dims]
    for d in set(dims):
        if dims.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                               f"it's spacing and dim arguments to have the same length, but got "
                               f"a spacing argument of length {len(spacing)} and a dim argument "
                               f"of length {len(dims)}.")
        steps = list(spacing)
    else:
        steps = [1 if spacing is None else spacing] * len(dims)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    f = input if input.dtype.is_floating_point or input.dtype.is_complex else \
        input.to(D.get_default_dtype())
    out = []
    for d, h in zip(dims, steps):
        if isinstance(h, Tensor) and h.dim() == 1:
            if h.shape[0] != input.shape[d]:
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same "
                                   f"device and have the same size as the input along dim {d}")
            out.append(_coordinates(f, d, h, edge_order))
        else:
            h = h.item() if isinstance(h, Tensor) else h
            if not isinstance(h, numbers.Number):
                raise TypeError(f"gradient(): spacing must be a number, a list of numbers or "
                                f"of 1-d tensors, not {type(h).__name__}")
            out.append(_uniform(f, d, h, edge_order))
    return tuple(out)


# -- histogram / histogramdd ------------------------------------------------------------------

def _outer_edges(x, k, rng):
    """(left, right) of dim k's bins: the range, else the data's min and max, widened by
    0.5 each way when they are equal (numpy's and PyTorch's rule)."""
    if rng is not None:
        lo, hi = float(rng[2 * k]), float(rng[2 * k + 1])
    elif x.shape[0]:
        col = x[:, k]
        lo, hi = float(col.amin()), float(col.amax())
    else:                             # no data: [0, 1], as PyTorch
        lo, hi = 0.0, 1.0
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"histogramdd: dimension {k}'s range [{lo}, {hi}] is not finite")
    if lo > hi:
        raise ValueError(f"histogramdd: expected upper bin edge {hi} to be greater than or "
                         f"equal to lower bin edge {lo} for dimension {k}")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


def _upper_bound(edges, col):
    """std::upper_bound of each value in edges, step for step as PyTorch's kernel runs it
    (so that edges given out of order bin as PyTorch's do; sorted, it is searchsorted)."""
    first = creation.zeros(col.shape, dtype=D.int64, device=col.device)
    count = creation.full(col.shape, edges.shape[0], dtype=D.int64, device=col.device)
    while bool((count > 0).any()):
        step = count // 2
        it = (first + step).clamp(max=edges.shape[0] - 1)
        right = (count > 0) & ~(col < edges[it])
        first = pointwise.where(right, it + 1, first)
        count = pointwise.where(right, count - step - 1, pointwise.where(count > 0, step, count))
    return first


def _bin_index(col, edges):
    """Each value's bin, as PyTorch's histogramdd kernel: values outside
    [edges[0], edges[-1]] (and NaN) are skipped (-1); the last bin includes its right
    edge."""
    n = edges.shape[0] - 1
    pos = _upper_bound(edges, col) - 1
    pos = pointwise.where(pos == n, n - 1, pos)
    return pointwise.where((col >= edges[0]) & (col <= edges[-1]), pos, -1)


def _histogramdd(x, bins, rng, weight, density, op):
    """x: (N, D) points. Returns (hist, [edges per dim])."""
    n_dims = x.shape[-1]
    if isinstance(bins, int) or isinstance(bins, Tensor) and op == "histogram":
        bins = [bins] * n_dims
    if len(bins) != n_dims:
        raise RuntimeError(f"{op}: expected {n_dims} sequences of bin edges for each of the "
                           f"{n_dims} dimensions of the input, but got {len(bins)}")
    if rng is not None and len(rng) != 2 * n_dims:
        raise RuntimeError(f"{op}: for a {n_dims}-dimensional input, expected range to have "
                           f"{2 * n_dims} elements, but got {len(rng)}")
    edges = []
    for k, b in enumerate(bins):
        if isinstance(b, Tensor):
            if b.dim() != 1 or b.shape[0] < 1:
                raise RuntimeError(f"{op}: bins tensor should have one dimension and at least "
                                   f"1 element, but got {b.dim()} dimensions")
            edges.append(b.to(x.dtype))
        else:
            if b <= 0:
                raise RuntimeError(f"{op}: bins must be > 0, but got {b} for dimension {k}")
            lo, hi = _outer_edges(x, k, rng)
            edges.append(creation.linspace(lo, hi, b + 1, dtype=x.dtype, device=x.device))
    sizes = [e.shape[0] - 1 for e in edges]
    flat = creation.zeros(x.shape[0], dtype=D.int64, device=x.device)
    inside = creation.ones(x.shape[0], dtype=D.bool_, device=x.device)
    for k, e in enumerate(edges):
        pos = _bin_index(x[:, k], e) if sizes[k] > 0 else creation.full_like(flat, -1)
        inside = inside & (pos >= 0)
        flat = flat * sizes[k] + pos.clamp(min=0)
    total = math.prod(sizes)
    w = None if weight is None else weight.reshape(-1).to(x.dtype)
    w = inside.to(x.dtype) if w is None else pointwise.where(inside, w, 0.0)
    hist = counting.bincount(flat, weights=w, minlength=total)[:total].to(x.dtype).reshape(sizes)
    if density:
        volume = None
        for k, e in enumerate(edges):
            shape = [1] * n_dims
            shape[k] = -1
            width = e.diff().reshape(shape)
            volume = width if volume is None else volume * width
        hist = hist / (hist.sum() * volume)
    return hist, edges


def _points(input, weight, op, dims):
    _tensor(input, "input", op)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{input.dtype.pt_name}'")
    if weight is not None:
        _tensor(weight, "weight", op)
        expect = tuple(input.shape) if dims is None else tuple(input.shape[:-1])
        if tuple(weight.shape) != expect:
            raise RuntimeError(f"{op}: if weight tensor is provided it should have the same "
                               f"shape as the input tensor excluding its innermost dimension, "
                               f"but got input with shape {list(input.shape)} and weight with "
                               f"shape {list(weight.shape)}")
    return input.reshape(-1, 1) if dims is None else input.reshape(-1, input.shape[-1])


@takes_out("histogram", dtype="exact")
def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of the flattened input: `bins` equal bins over `range` (the
    data's min and max by default), or the given 1-d tensor of edges."""
    with no_grad():
        x = _points(input, weight, "histogram", None)
        if isinstance(bins, Tensor) and bins.dtype is not input.dtype:
            raise RuntimeError(f"torch.histogram: input tensor and bins tensors should have the "
                               f"same dtype, but got input {input.dtype.pt_name} and bins "
                               f"{bins.dtype.pt_name}")
        hist, edges = _histogramdd(x, bins, range, weight, density, "histogram")
    from ..return_types import histogram as _result
    return _result(hist, edges[0])


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of the points input[..., :] (the last dim is the point's
    coordinates): per dim, `bins` equal bins (an int or one per dim) or given edges."""
    with no_grad():
        if not isinstance(input, Tensor) or input.dim() < 1:
            raise RuntimeError("histogramdd: input tensor should have at least 1 dimension")
        x = _points(input, weight, "histogramdd", input.shape[-1])
        if isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], Tensor):
            bins = list(bins)
        hist, edges = _histogramdd(x, bins, range, weight, density, "histogramdd")
    from ..return_types import histogramdd as _result
    return _result(hist, tuple(edges))


PUBLIC = {"gradient": gradient, "histogram": histogram, "histogramdd": histogramdd}
METHODS = {"histogram": histogram}
